import type { Access } from "./access.js";
import { type MessageRow, type SessionRow, toMessage, toSession } from "./rows.js";
import { sessionNotFound } from "./sessions.js";
import type { Message, Session } from "./types.js";

export type ExportFormat = "jsonl" | "markdown";

export interface ExportOptions {
  format: ExportFormat;
  /** Sessions to export; all sessions (archived and hidden included) when omitted. */
  sessionIds?: readonly string[];
  /** Include rewound and compacted history. Default true: an export is an archive. */
  includeHistory?: boolean;
}

const PAGE = 500;

/**
 * Stream sessions as JSONL (one `session` line, then one `message` line per
 * message) or Markdown. Reads a page at a time and yields between pages, so
 * a huge store never sits in memory or blocks the event loop for long.
 */
export async function* exportSessions(
  access: Access,
  options: ExportOptions,
): AsyncGenerator<string> {
  if (options.format !== "jsonl" && options.format !== "markdown") {
    throw new RangeError(`format must be "jsonl" or "markdown", got ${String(options.format)}`);
  }
  const includeHistory = options.includeHistory ?? true;
  for await (const session of sessionsToExport(access, options.sessionIds)) {
    if (options.format === "jsonl") yield `${JSON.stringify({ type: "session", session })}\n`;
    else yield markdownHeader(session);
    let after = -1;
    for (;;) {
      const rows = access
        .read()
        .stmt(
          `SELECT * FROM messages WHERE session_id = ? AND ordinal > ? ${includeHistory ? "" : "AND active = 1"}
           ORDER BY ordinal LIMIT ${PAGE}`,
        )
        .all(session.id, after) as MessageRow[];
      if (rows.length === 0) break;
      let chunk = "";
      for (const row of rows) {
        const message = toMessage(row);
        chunk +=
          options.format === "jsonl"
            ? `${JSON.stringify({ type: "message", message })}\n`
            : markdownMessage(message);
      }
      yield chunk;
      after = rows[rows.length - 1]!.ordinal;
      if (rows.length < PAGE) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

async function* sessionsToExport(
  access: Access,
  ids: readonly string[] | undefined,
): AsyncGenerator<Session> {
  const byId = access.read().stmt("SELECT * FROM sessions WHERE id = ?");
  if (ids) {
    for (const id of ids) {
      const row = byId.get(id) as SessionRow | undefined;
      if (!row) throw sessionNotFound(id);
      yield toSession(row);
    }
    return;
  }
  let after = "";
  for (;;) {
    const rows = access
      .read()
      .stmt(`SELECT * FROM sessions WHERE id > ? ORDER BY id LIMIT ${PAGE}`)
      .all(after) as SessionRow[];
    for (const row of rows) yield toSession(row);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}

function markdownHeader(session: Session): string {
  const lines = [
    `# ${session.title ?? `Session ${session.id}`}`,
    "",
    `- id: \`${session.id}\``,
    `- source: ${session.source}${session.chatKey ? ` (${session.chatKey})` : ""}`,
    `- created: ${new Date(session.createdAt).toISOString()}`,
  ];
  if (session.endedAt !== null) {
    lines.push(`- ended: ${new Date(session.endedAt).toISOString()} (${session.endReason ?? ""})`);
  }
  return `${lines.join("\n")}\n\n`;
}

function markdownMessage(message: Message): string {
  const parts: string[] = [];
  if (typeof message.content === "string") {
    if (message.content !== "") parts.push(message.content);
  } else if (message.content !== null) {
    parts.push(`\`\`\`json\n${JSON.stringify(message.content, null, 2)}\n\`\`\``);
  }
  if (message.toolCallId !== null) parts.unshift(`_result of tool call \`${message.toolCallId}\`_`);
  for (const call of message.toolCalls ?? []) parts.push(markdownToolCall(call));
  const tag = message.active ? "" : ` _(${message.archivedReason ?? "archived"})_`;
  const name = message.name ? ` (${message.name})` : "";
  return `## ${message.ordinal}. ${message.role}${name}${tag}\n\n${parts.join("\n\n")}\n\n`;
}

/** A tool call as its name and arguments (OpenAI's `{ id, function: { name, arguments } }`, or any JSON). */
function markdownToolCall(call: unknown): string {
  const c = (call ?? {}) as {
    id?: unknown;
    name?: unknown;
    function?: { name?: unknown; arguments?: unknown };
  };
  const name = c.function?.name ?? c.name;
  let args: unknown = c.function ? c.function.arguments : call;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      // not JSON: shown as it is
    }
  }
  const title = `**tool call**${typeof name === "string" ? ` \`${name}\`` : ""}${typeof c.id === "string" ? ` (id \`${c.id}\`)` : ""}`;
  const body = typeof args === "string" ? args : JSON.stringify(args, null, 2);
  return `${title}\n\n\`\`\`json\n${body}\n\`\`\``;
}

import { type MessageRow, type SessionRow, toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import type { Access } from "./access.js";
import { sessionNotFound } from "./sessions.js";

export type ExportFormat = "jsonl" | "markdown";

export interface ExportOptions {
  format: ExportFormat;
  /** Sessions to export; all sessions (archived and hidden included) when omitted. */
  sessionIds?: readonly string[];
  /** Include rewound and compacted history. Default true: an export is an archive. */
  includeHistory?: boolean;
}

export const EXPORT_PAGE = 500;
const PAGE = EXPORT_PAGE;

/** Where an export stands between two steps: plain data, so a reader thread can carry it. */
export interface ExportCursor {
  /** Sessions done so far when `sessionIds` is given; unused otherwise. */
  index: number;
  /** The last session started (all-sessions exports go on after it, in id order). */
  afterSession: string;
  /** The session being written, and the last ordinal written of it. */
  session: string | null;
  afterOrdinal: number;
}

export interface ExportStep {
  chunk: string;
  next: ExportCursor | null;
}

/**
 * One step of an export: up to about PAGE messages (whole sessions when they
 * are short), as text, and where the next step starts (null: done). Steps
 * are small on purpose: between them the caller's event loop is free, and a
 * reader thread can run them (the store does when it has reader threads).
 */
export function exportStep(
  access: Access,
  options: ExportOptions,
  cursor?: ExportCursor,
): ExportStep {
  if (options.format !== "jsonl" && options.format !== "markdown") {
    throw new RangeError(`format must be "jsonl" or "markdown", got ${String(options.format)}`);
  }
  const includeHistory = options.includeHistory ?? true;
  const at: ExportCursor = cursor
    ? { ...cursor }
    : { index: 0, afterSession: "", session: null, afterOrdinal: -1 };
  const conn = access.read();
  let chunk = "";
  let written = 0;
  while (written < PAGE) {
    if (at.session === null) {
      const session = nextSession(access, options.sessionIds, at);
      if (!session) return { chunk, next: null };
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "session", session })}\n`
          : markdownHeader(session);
      at.session = session.id;
      at.afterSession = session.id;
      at.afterOrdinal = -1;
    }
    const rows = conn
      .stmt(
        `SELECT * FROM messages WHERE session_id = ? AND ordinal > ? ${includeHistory ? "" : "AND active = 1"}
         ORDER BY ordinal LIMIT ${PAGE}`,
      )
      .all(at.session, at.afterOrdinal) as MessageRow[];
    for (const row of rows) {
      const message = toMessage(row);
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "message", message })}\n`
          : markdownMessage(message);
    }
    written += rows.length + 1;
    if (rows.length < PAGE) at.session = null;
    else at.afterOrdinal = rows[rows.length - 1]!.ordinal;
  }
  return { chunk, next: at };
}

/**
 * Stream sessions as JSONL (one `session` line, then one `message` line per
 * message) or Markdown, a step at a time with the event loop free between
 * steps: a huge store never sits in memory or blocks the loop for long.
 */
export async function* exportSessions(
  options: ExportOptions,
  step: (
    options: ExportOptions,
    cursor: ExportCursor | undefined,
  ) => ExportStep | Promise<ExportStep>,
): AsyncGenerator<string> {
  let cursor: ExportCursor | undefined;
  for (;;) {
    const { chunk, next } = await step(options, cursor);
    if (chunk) yield chunk;
    if (!next) return;
    cursor = next;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function nextSession(
  access: Access,
  ids: readonly string[] | undefined,
  at: ExportCursor,
): Session | undefined {
  const conn = access.read();
  if (ids) {
    const id = ids[at.index];
    if (id === undefined) return undefined;
    at.index++;
    const row = conn.stmt("SELECT * FROM sessions WHERE id = ?").get(id) as SessionRow | undefined;
    if (!row) throw sessionNotFound(id);
    return toSession(row);
  }
  const row = conn
    .stmt("SELECT * FROM sessions WHERE id > ? ORDER BY id LIMIT 1")
    .get(at.afterSession) as SessionRow | undefined;
  return row ? toSession(row) : undefined;
}

export function markdownHeader(session: Session): string {
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

export function markdownMessage(message: Message): string {
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

/**
 * Export, the part every backend shares: the options, the cursor an export
 * goes on from, each step's page assembly, the JSONL and Markdown
 * rendering, and the stream of steps. A backend only reads rows
 * (ExportSql: sqlite/export.ts, pg/export.ts).
 */
import { printable } from "../printable.js";
import { sessionNotFound } from "./session-create.js";
import type { Message, Session } from "./types.js";

export type ExportFormat = "jsonl" | "markdown";

export interface ExportOptions {
  format: ExportFormat;
  /** Sessions to export; all sessions (archived and hidden included) when omitted. */
  sessionIds?: readonly string[];
  /** Include rewound and compacted history. Default true: an export is an archive. */
  includeHistory?: boolean;
}

/** About how many messages one step writes (and at most how many one read returns). */
const EXPORT_PAGE = 500;

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

/** The rows an export reads, from one backend. */
export interface ExportSql {
  /** The session with this id, or undefined. */
  session(id: string): Promise<Session | undefined>;
  /** The first session after `afterId` in bytewise id order, or undefined. */
  sessionAfter(afterId: string): Promise<Session | undefined>;
  /** Up to `limit` messages of a session after `afterOrdinal`, by ordinal; live ones only unless `includeHistory`. */
  messages(page: ExportPage): Promise<Message[]>;
}

/** A page of one session's messages, as an export reads them. */
export interface ExportPage {
  sessionId: string;
  afterOrdinal: number;
  limit: number;
  includeHistory: boolean;
}

/**
 * One step of an export: up to about EXPORT_PAGE messages (whole sessions
 * when they are short), as text, and where the next step starts (null:
 * done). Steps are small on purpose: between them the caller's event loop
 * is free, and a reader thread can run them (a SQLite store does when it
 * has reader threads).
 */
export async function exportStep(
  sql: ExportSql,
  options: ExportOptions,
  cursor?: ExportCursor,
): Promise<ExportStep> {
  if (options.format !== "jsonl" && options.format !== "markdown") {
    throw new RangeError(`format must be "jsonl" or "markdown", got ${String(options.format)}`);
  }
  const includeHistory = options.includeHistory ?? true;
  const at: ExportCursor = cursor
    ? { ...cursor }
    : { index: 0, afterSession: "", session: null, afterOrdinal: -1 };
  let chunk = "";
  let written = 0;
  while (written < EXPORT_PAGE) {
    if (at.session === null) {
      const session = await nextSession(sql, options.sessionIds, at);
      if (!session) return { chunk, next: null };
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "session", session })}\n`
          : markdownText(markdownHeader(session));
      at.session = session.id;
      at.afterSession = session.id;
      at.afterOrdinal = -1;
    }
    const messages = await sql.messages({
      sessionId: at.session,
      afterOrdinal: at.afterOrdinal,
      limit: EXPORT_PAGE,
      includeHistory,
    });
    for (const message of messages) {
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "message", message })}\n`
          : markdownText(markdownMessage(message));
    }
    written += messages.length + 1;
    if (messages.length < EXPORT_PAGE) at.session = null;
    else at.afterOrdinal = messages[messages.length - 1]!.ordinal;
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
  step: (options: ExportOptions, cursor: ExportCursor | undefined) => Promise<ExportStep>,
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

/** The next session to write: the next of `ids` (HEARTH_SESSION_NOT_FOUND for a missing one), or the next in id order. */
async function nextSession(
  sql: ExportSql,
  ids: readonly string[] | undefined,
  at: ExportCursor,
): Promise<Session | undefined> {
  if (ids) {
    const id = ids[at.index];
    if (id === undefined) return undefined;
    at.index++;
    const session = await sql.session(id);
    if (!session) throw sessionNotFound(id);
    return session;
  }
  return sql.sessionAfter(at.afterSession);
}

/**
 * Markdown is read in terminals and editors: control characters (ESC, NUL,
 * a lone CR) and bidi overrides become visible escapes (`\x1b`, `\x00`,
 * `\u202e`); newlines and tabs stay, CRLF becomes LF. JSONL stays exact.
 */
function markdownText(text: string): string {
  return printable(text.replace(/\r\n/g, "\n"));
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

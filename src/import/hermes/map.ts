/**
 * One Hermes Agent row as hearth stores it. What has a home is mapped; every
 * other non-empty column is counted in the tally by its name, never dropped
 * silently. docs/import.md has the table of what goes where.
 */
import type { ImportedMessage, ImportedSession } from "../../store/imports.js";
import { MAX_METADATA_BYTES, MAX_OWNER_ID_LENGTH } from "../../store/metadata.js";
import type { JsonObject, MessageRole } from "../../store/types.js";
import { secondsToMs, type Tally } from "../source.js";

type Row = Record<string, unknown>;

/** Session columns with a home (mapped, or kept in metadata.hermes); the rest are tallied. */
const SESSION_MAPPED = new Set([
  "id",
  "source",
  "user_id",
  "chat_id",
  "thread_id",
  "session_key",
  "chat_type",
  "display_name",
  "title",
  "title_source",
  "started_at",
  "ended_at",
  "end_reason",
  "parent_session_id",
  "archived",
  "pinned",
  "hidden",
  "last_activity_at",
  "model",
  "cwd",
  "git_branch",
  "input_tokens",
  "output_tokens",
  // counters hearth keeps itself, and the prompt's pointer (the prompt is tallied by itself)
  "message_count",
  "tool_call_count",
  "system_prompt_hash",
]);

/** Message columns with a home; display_order and display_identity are derived and ignored. */
const MESSAGE_MAPPED = new Set([
  "id",
  "session_id",
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "active",
  "compacted",
  "platform_message_id",
  "display_order",
  "display_identity",
]);

const ROLES: ReadonlySet<string> = new Set<MessageRole>(["system", "user", "assistant", "tool"]);

export const HERMES_PREFIX = "hermes:";

/** The hearth id of a Hermes session: stable, so every run finds what the last one wrote. */
export function hearthSessionId(hermesId: string): string {
  return `hermes-${hermesId}`;
}

const str = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === "string" ? v : String(v);
const flag = (v: unknown): boolean => v === 1 || v === 1n || v === true || v === "1";
const filled = (v: unknown): boolean =>
  v !== null && v !== undefined && v !== "" && v !== 0 && v !== 0n && v !== "[]" && v !== "{}";

export function mapSession(row: Row, parentId: string | null, tally: Tally): ImportedSession {
  const id = String(row.id);
  const createdAt = secondsToMs(row.started_at);
  if (createdAt === undefined)
    tally.add("session.started_at (not a time; the first message's time or 0 used)");
  for (const [column, value] of Object.entries(row))
    if (!SESSION_MAPPED.has(column) && filled(value)) tally.add(`session.${column}`);
  const hermes: JsonObject = { id };
  for (const [key, column] of [
    ["model", "model"],
    ["sessionKey", "session_key"],
    ["chatType", "chat_type"],
    ["displayName", "display_name"],
    ["cwd", "cwd"],
    ["gitBranch", "git_branch"],
    ["inputTokens", "input_tokens"],
    ["outputTokens", "output_tokens"],
  ] as const) {
    const v = row[column];
    if (filled(v)) hermes[key] = typeof v === "bigint" ? Number(v) : (v as string | number);
  }
  const parent = str(row.parent_session_id);
  if (parent !== null && parentId === null) {
    hermes.parentSessionId = parent;
    tally.add("session.parent_session_id (parent not in the source; kept in metadata)");
  }
  let ownerId = str(row.user_id);
  if (ownerId === "") ownerId = null;
  if (ownerId !== null && ownerId.length > MAX_OWNER_ID_LENGTH) {
    hermes.userId = ownerId.slice(0, 1024);
    ownerId = null;
    tally.add("session.user_id (longer than an owner id; kept in metadata)");
  }
  const chat = str(row.chat_id);
  const thread = str(row.thread_id);
  const title = str(row.title);
  return {
    id: hearthSessionId(id),
    source: str(row.source) || "cli",
    chatKey: chat ? (thread ? `${chat}/${thread}` : chat) : null,
    title: title && title.length <= 200 ? title : null,
    titleSource: title ? (row.title_source === "user" ? "user" : "auto") : null,
    createdAt: createdAt ?? 0,
    endedAt: secondsToMs(row.ended_at) ?? null,
    endReason: str(row.end_reason),
    parentId,
    ownerId,
    pinned: flag(row.pinned),
    archived: flag(row.archived),
    hidden: flag(row.hidden),
    metadata: { hermes },
  };
}

/** A message row as hearth stores it, or null for a role hearth has no home for (tallied). */
export function mapMessage(row: Row, fallbackAt: number, tally: Tally): ImportedMessage | null {
  const role = String(row.role);
  if (!ROLES.has(role)) {
    tally.add(`message role ${role}`);
    return null;
  }
  for (const [column, value] of Object.entries(row))
    if (!MESSAGE_MAPPED.has(column) && filled(value)) tally.add(`message.${column}`);
  const hermes: JsonObject = { id: Number(row.id) };
  let toolCalls: unknown[] | null = null;
  const rawCalls = str(row.tool_calls);
  if (rawCalls !== null && rawCalls !== "" && rawCalls !== "null") {
    try {
      const parsed: unknown = JSON.parse(rawCalls);
      if (Array.isArray(parsed)) toolCalls = parsed.length > 0 ? parsed : null;
      else tally.add("message.tool_calls (not a JSON array)");
    } catch {
      tally.add("message.tool_calls (not JSON)");
    }
  }
  let content: string | null = str(row.content);
  if (content === null && !(role === "assistant" && toolCalls !== null)) content = "";
  let createdAt = secondsToMs(row.timestamp);
  if (createdAt === undefined) {
    createdAt = fallbackAt;
    tally.add("message.timestamp (not a time; the session's start used)");
  }
  const tokens = typeof row.token_count === "bigint" ? Number(row.token_count) : row.token_count;
  const count = Number.isSafeInteger(tokens) && (tokens as number) >= 0 ? (tokens as number) : null;
  if (count === null && filled(row.token_count)) tally.add("message.token_count (not a count)");
  for (const [key, column] of [
    ["finishReason", "finish_reason"],
    ["platformMessageId", "platform_message_id"],
  ] as const) {
    const v = str(row[column]);
    if (v) hermes[key] = v;
  }
  keepReasoning(hermes, str(row.reasoning), str(row.reasoning_content), tally);
  const active = row.active === undefined || row.active === null || flag(row.active);
  return {
    role: role as MessageRole,
    content,
    name: role === "tool" ? str(row.tool_name) : null,
    toolCalls,
    toolCallId: str(row.tool_call_id),
    tokensIn: role === "assistant" ? null : count,
    tokensOut: role === "assistant" ? count : null,
    clientId: `${HERMES_PREFIX}${String(row.id)}`,
    createdAt,
    active,
    archivedReason: active ? null : flag(row.compacted) ? "compaction" : "rewind",
    metadata: { hermes },
  };
}

/** Reasoning goes into the message's metadata while it fits there; what does not is tallied. */
function keepReasoning(
  hermes: JsonObject,
  reasoning: string | null,
  reasoningContent: string | null,
  tally: Tally,
): void {
  const fits = () => Buffer.byteLength(JSON.stringify({ hermes }), "utf8") <= MAX_METADATA_BYTES;
  for (const [key, text] of [
    ["reasoning", reasoning],
    ["reasoningContent", reasoningContent === reasoning ? null : reasoningContent],
  ] as const) {
    if (!text) continue;
    hermes[key] = text;
    if (!fits()) {
      delete hermes[key];
      tally.add(
        `message.${key === "reasoning" ? "reasoning" : "reasoning_content"} (over the 16 KiB metadata limit)`,
      );
    }
  }
}

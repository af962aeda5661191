import { type JsonObject, serializeMetadata } from "./metadata.js";
import type { Message, MessageRole, NewMessage } from "./types.js";

const ROLES: ReadonlySet<string> = new Set<MessageRole>(["system", "user", "assistant", "tool"]);

/** A message validated and serialised before any transaction starts, so bad input changes nothing. */
export interface PreparedMessage {
  role: MessageRole;
  content: Message["content"];
  stored: string;
  contentType: "text" | "json";
  name: string | null;
  toolCalls: unknown[] | null;
  toolCallsJson: string | null;
  toolCallId: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  createdAt: number;
  clientId: string | null;
  metadata: JsonObject | null;
  metadataJson: string | null;
}

/** Validate and serialise outside the transaction, so bad input changes nothing. */
export function prepare(message: NewMessage, now: number): PreparedMessage {
  if (message === null || typeof message !== "object")
    throw new TypeError("message must be an object");
  if (!ROLES.has(message.role)) {
    throw new TypeError(
      `message.role must be one of system, user, assistant, tool; got ${JSON.stringify(message.role)}`,
    );
  }
  const toolCalls = message.toolCalls ?? null;
  if (toolCalls !== null && !Array.isArray(toolCalls)) {
    throw new TypeError("message.toolCalls must be an array or null");
  }
  const { content } = message;
  let stored: string;
  let contentType: "text" | "json";
  if (typeof content === "string") {
    stored = content;
    contentType = "text";
  } else if (content === null) {
    // An assistant turn that only calls tools has no text (OpenAI's `content: null`).
    if (message.role !== "assistant" || toolCalls === null || toolCalls.length === 0) {
      throw new TypeError(
        "message.content may be null only for an assistant message with toolCalls; use a string otherwise",
      );
    }
    stored = "null";
    contentType = "json";
  } else if (typeof content === "object") {
    stored = JSON.stringify(content);
    contentType = "json";
  } else {
    throw new TypeError("message.content must be a string, an object or an array");
  }
  for (const key of ["name", "toolCallId", "clientId"] as const) {
    const v = message[key];
    if (v !== undefined && v !== null && typeof v !== "string") {
      throw new TypeError(`message.${key} must be a string or null, got ${typeof v}`);
    }
  }
  if (
    message.createdAt !== undefined &&
    (!Number.isSafeInteger(message.createdAt) || message.createdAt < 0)
  ) {
    throw new RangeError(
      `message.createdAt must be epoch milliseconds (a non-negative integer), got ${message.createdAt}`,
    );
  }
  for (const key of ["tokensIn", "tokensOut"] as const) {
    const v = message[key];
    if (v !== undefined && v !== null && (!Number.isInteger(v) || v < 0)) {
      throw new RangeError(`message.${key} must be a non-negative integer, got ${v}`);
    }
  }
  const metadataJson = serializeMetadata(message.metadata, "message.metadata");
  return {
    role: message.role,
    content,
    stored,
    contentType,
    name: message.name ?? null,
    toolCalls,
    toolCallsJson: toolCalls === null ? null : JSON.stringify(toolCalls),
    toolCallId: message.toolCallId ?? null,
    tokensIn: message.tokensIn ?? null,
    tokensOut: message.tokensOut ?? null,
    createdAt: message.createdAt ?? now,
    clientId: message.clientId ?? null,
    metadata: metadataJson === null ? null : (JSON.parse(metadataJson) as JsonObject),
    metadataJson,
  };
}

/** The most messages one read returns (messages.load, jsonTail.read). */
export const MAX_LOAD = 100_000;

/** Which messages load() returns: all (the default), or a keyset window. */
export interface LoadOptions {
  /** Archived (rewound, compacted) messages too. Default false. */
  includeHistory?: boolean;
  /** At most this many (1 to 100,000). */
  limit?: number;
  /** Only messages with a smaller ordinal (page towards older). */
  beforeOrdinal?: number;
  /** Only messages with a larger ordinal (page towards newer). */
  afterOrdinal?: number;
  /** "oldest-first" (default) or "newest-first". */
  order?: "oldest-first" | "newest-first";
}

/**
 * A validated load() window: `where` is its keyset condition ("AND ordinal
 * < ?"...), with `?` placeholders for `params` in order (PostgreSQL numbers
 * them); the limit comes after them.
 */
export interface LoadWindow {
  includeHistory: boolean;
  where: string;
  params: number[];
  order: "ASC" | "DESC";
  limit: number | undefined;
}

export function loadWindow(options: LoadOptions): LoadWindow {
  const where: string[] = [];
  const params: number[] = [];
  const bound = (key: "beforeOrdinal" | "afterOrdinal", op: "<" | ">"): void => {
    const value = options[key];
    if (value === undefined) return;
    if (!Number.isInteger(value))
      throw new TypeError(`options.${key} must be an integer, got ${value}`);
    where.push(`AND ordinal ${op} ?`);
    params.push(value);
  };
  bound("beforeOrdinal", "<");
  bound("afterOrdinal", ">");
  const { limit, order = "oldest-first" } = options;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOAD)) {
    throw new RangeError(`options.limit must be an integer from 1 to ${MAX_LOAD}, got ${limit}`);
  }
  if (order !== "oldest-first" && order !== "newest-first") {
    throw new TypeError(
      `options.order must be "oldest-first" or "newest-first", got ${JSON.stringify(order)}`,
    );
  }
  return {
    includeHistory: Boolean(options.includeHistory),
    where: where.join(" "),
    params,
    order: order === "newest-first" ? "DESC" : "ASC",
    limit,
  };
}

export function checkAfterOrdinal(afterOrdinal: unknown): asserts afterOrdinal is number {
  if (!Number.isInteger(afterOrdinal) || (afterOrdinal as number) < -1) {
    throw new RangeError(`afterOrdinal must be an integer >= -1, got ${String(afterOrdinal)}`);
  }
}

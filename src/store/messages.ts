import { HearthError } from "../errors.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import { casOn, type MetaCas } from "./meta.js";
import { MESSAGE_COLUMNS, type MessageRow, messageFromRaw, toMessage } from "./rows.js";
import { sessionNotFound } from "./sessions.js";
import type { Message, MessageRole, NewMessage, StoreCounts, TranscriptEntry } from "./types.js";

const ROLES: ReadonlySet<string> = new Set<MessageRole>(["system", "user", "assistant", "tool"]);

export class Messages {
  constructor(private readonly access: Access) {}

  /** Append one message in its own transaction. Idempotent on `clientId`. */
  async append(sessionId: string, message: NewMessage): Promise<Message> {
    const prepared = prepare(message, this.access.now());
    return this.access.writeTransaction((conn) => this.insert(conn, sessionId, prepared));
  }

  /** Append several messages in one transaction: all of them or none (D4). */
  async appendBatch(sessionId: string, messages: readonly NewMessage[]): Promise<Message[]> {
    const now = this.access.now();
    const prepared = messages.map((m) => prepare(m, now));
    return this.access.writeTransaction((conn) =>
      prepared.map((m) => this.insert(conn, sessionId, m)),
    );
  }

  /**
   * Group commit: append messages to any sessions in ONE transaction, each
   * item on its own savepoint, so one bad item (an unknown session, invalid
   * input) fails alone while the rest commit together. Every result is known
   * only after the single COMMIT.
   */
  async appendMany(
    items: readonly {
      sessionId: string;
      message: NewMessage;
      /** A meta compare-and-set applied in the same savepoint, before or after the insert (turn leases). */
      metaBefore?: MetaCas;
      metaAfter?: MetaCas;
    }[],
  ): Promise<AppendResult[]> {
    const now = this.access.now();
    const results: AppendResult[] = items.map(() => ({
      ok: false,
      error: new HearthError("HEARTH_INTERNAL", "internal: the append was not attempted"),
    }));
    const prepared = items.map((item, i) => {
      try {
        return prepare(item.message, now);
      } catch (err) {
        results[i] = { ok: false, error: err as Error };
        return undefined;
      }
    });
    if (prepared.every((p) => p === undefined)) return results;
    await this.access.writeTransaction((conn) => {
      prepared.forEach((p, i) => {
        if (!p) return;
        const item = items[i]!;
        conn.stmt("SAVEPOINT hearth_item").run();
        try {
          if (item.metaBefore) casOn(conn, item.metaBefore.key, item.metaBefore.decide, now);
          results[i] = { ok: true, message: this.insert(conn, item.sessionId, p) };
          if (item.metaAfter) casOn(conn, item.metaAfter.key, item.metaAfter.decide, now);
          conn.stmt("RELEASE hearth_item").run();
        } catch (err) {
          conn.stmt("ROLLBACK TO hearth_item").run();
          conn.stmt("RELEASE hearth_item").run();
          results[i] = { ok: false, error: err as Error };
        }
      });
    });
    return results;
  }

  /**
   * Save a transcript that may mix loaded and new messages. Messages that
   * carry an `id` are already stored and are never inserted again (D3); the
   * rest are appended in one transaction. Returns the newly stored ones.
   */
  async save(sessionId: string, transcript: readonly TranscriptEntry[]): Promise<Message[]> {
    const now = this.access.now();
    const fresh = transcript.filter((m) => m.id === undefined).map((m) => prepare(m, now));
    const known = transcript.filter((m) => m.id !== undefined).map((m) => m.id!);
    return this.access.writeTransaction((conn) => {
      const owner = conn.stmt("SELECT session_id FROM messages WHERE id = ?");
      for (const id of known) {
        const row = owner.get(id) as { session_id: string } | undefined;
        if (row?.session_id !== sessionId) {
          throw new RangeError(
            `transcript entry with id ${id} is not a stored message of session ${sessionId}`,
          );
        }
      }
      return fresh.map((m) => this.insert(conn, sessionId, m));
    });
  }

  /** The live transcript in order; with `includeHistory`, rewound and compacted messages too. */
  async load(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    const { where, params, order, limit } = window(options);
    const conn = this.access.read();
    const history = options.includeHistory ? "" : "AND active = 1";
    // Keyset reads on (session_id, active, ordinal): a window of N rows costs about N rows,
    // however long the transcript is.
    const rows = conn
      .stmt(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ${history} ${where}
         ORDER BY ordinal ${order}${limit === undefined ? "" : " LIMIT ?"}`,
      )
      .raw(true)
      .all(sessionId, ...params, ...(limit === undefined ? [] : [limit])) as unknown[][];
    if (rows.length === 0 && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
      throw sessionNotFound(sessionId);
    }
    const messages = new Array<Message>(rows.length);
    for (let i = 0; i < rows.length; i++) messages[i] = messageFromRaw(sessionId, rows[i]!);
    return messages;
  }

  /**
   * `load()` as UTF-8 JSON bytes (an array of messages), for servers that
   * send it on: with reader threads the bytes are built there and handed
   * over without a copy, and the caller's event loop never holds the rows
   * or encodes the text.
   */
  async loadJson(sessionId: string, options: LoadOptions = {}): Promise<Uint8Array> {
    return new TextEncoder().encode(JSON.stringify(await this.load(sessionId, options)));
  }

  /** The last `count` live messages, oldest first: what an agent loop feeds its model. */
  async tail(sessionId: string, count: number): Promise<Message[]> {
    return (await this.load(sessionId, { limit: count, order: "newest-first" })).reverse();
  }

  /**
   * Archive every live message after `afterOrdinal` (-1 archives them all), in
   * one transaction. Archived messages stay as history. Returns how many.
   */
  async rewind(sessionId: string, afterOrdinal: number): Promise<number> {
    if (!Number.isInteger(afterOrdinal) || afterOrdinal < -1) {
      throw new RangeError(`afterOrdinal must be an integer >= -1, got ${afterOrdinal}`);
    }
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      if (
        afterOrdinal >= 0 &&
        !conn
          .stmt("SELECT 1 FROM messages WHERE session_id = ? AND ordinal = ? AND active = 1")
          .get(sessionId, afterOrdinal)
      ) {
        throw new HearthError(
          "HEARTH_ORDINAL_OUT_OF_RANGE",
          `session ${sessionId} has no live message with ordinal ${afterOrdinal}`,
          { resource: sessionId, hint: "load the transcript to see its ordinals" },
        );
      }
      return this.archive(conn, sessionId, afterOrdinal, "rewind");
    });
  }

  /**
   * Compaction: archive the whole live transcript and start it again from a
   * summary message, in one transaction (D4). Returns the summary message.
   */
  async compact(
    sessionId: string,
    summary: { content: string; tokensOut?: number | null },
  ): Promise<{ summary: Message; archived: number }> {
    const prepared = prepare(
      {
        role: "system",
        content: summary.content,
        name: "summary",
        tokensOut: summary.tokensOut ?? null,
      },
      this.access.now(),
    );
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      const archived = this.archive(conn, sessionId, -1, "compaction");
      return { summary: this.insert(conn, sessionId, prepared), archived };
    });
  }

  async counts(): Promise<StoreCounts> {
    const row = this.access
      .read()
      .stmt(
        `SELECT (SELECT count(*) FROM sessions) AS sessions,
                (SELECT count(*) FROM messages) AS messages,
                (SELECT count(*) FROM messages WHERE active = 1) AS active`,
      )
      .get() as { sessions: number; messages: number; active: number };
    return {
      sessions: row.sessions,
      messages: row.messages,
      activeMessages: row.active,
      archivedMessages: row.messages - row.active,
    };
  }

  private archive(
    conn: Connection,
    sessionId: string,
    afterOrdinal: number,
    reason: string,
  ): number {
    const { changes } = conn
      .stmt(
        `UPDATE messages SET active = 0, archived_reason = ?
         WHERE session_id = ? AND active = 1 AND ordinal > ?`,
      )
      .run(reason, sessionId, afterOrdinal);
    conn
      .stmt(
        `UPDATE sessions SET message_count = message_count - ?, updated_at = ?, last_activity_at = ?
         WHERE id = ?`,
      )
      .run(changes, this.access.now(), this.access.now(), sessionId);
    return changes;
  }

  private insert(conn: Connection, sessionId: string, m: PreparedMessage): Message {
    if (m.clientId !== null) {
      const existing = conn
        .stmt("SELECT * FROM messages WHERE session_id = ? AND client_id = ?")
        .get(sessionId, m.clientId) as MessageRow | undefined;
      if (existing) return toMessage(existing);
    }
    const tokens = (m.tokensIn ?? 0) + (m.tokensOut ?? 0);
    const slot = conn
      .stmt(
        `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
           token_count = token_count + ?, last_activity_at = max(last_activity_at, ?), updated_at = ?
         WHERE id = ? RETURNING next_ordinal - 1 AS ordinal`,
      )
      .get(tokens, m.createdAt, m.createdAt, sessionId) as { ordinal: number } | undefined;
    if (!slot) throw sessionNotFound(sessionId);
    const { lastInsertRowid } = conn
      .stmt(
        `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
           tool_call_id, tokens_in, tokens_out, created_at, client_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        sessionId,
        slot.ordinal,
        m.role,
        m.stored,
        m.contentType,
        m.name,
        m.toolCallsJson,
        m.toolCallId,
        m.tokensIn,
        m.tokensOut,
        m.createdAt,
        m.clientId,
      );
    return {
      id: Number(lastInsertRowid),
      sessionId,
      ordinal: slot.ordinal,
      role: m.role,
      content: m.content,
      name: m.name,
      toolCalls: m.toolCalls,
      toolCallId: m.toolCallId,
      tokensIn: m.tokensIn,
      tokensOut: m.tokensOut,
      createdAt: m.createdAt,
      active: true,
      archivedReason: null,
      clientId: m.clientId,
    };
  }
}

export type AppendResult = { ok: true; message: Message } | { ok: false; error: Error };

interface PreparedMessage {
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
}

/** Validate and serialise outside the transaction, so bad input changes nothing. */
function prepare(message: NewMessage, now: number): PreparedMessage {
  if (message === null || typeof message !== "object")
    throw new TypeError("message must be an object");
  if (!ROLES.has(message.role)) {
    throw new TypeError(
      `message.role must be one of system, user, assistant, tool; got ${JSON.stringify(message.role)}`,
    );
  }
  const { content } = message;
  let stored: string;
  let contentType: "text" | "json";
  if (typeof content === "string") {
    stored = content;
    contentType = "text";
  } else if (content !== null && typeof content === "object") {
    stored = JSON.stringify(content);
    contentType = "json";
  } else {
    throw new TypeError("message.content must be a string, an object or an array");
  }
  const toolCalls = message.toolCalls ?? null;
  if (toolCalls !== null && !Array.isArray(toolCalls)) {
    throw new TypeError("message.toolCalls must be an array or null");
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
  };
}

function requireSession(conn: Connection, sessionId: string): void {
  if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
    throw sessionNotFound(sessionId);
  }
}

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

function window(options: LoadOptions): {
  where: string;
  params: number[];
  order: "ASC" | "DESC";
  limit: number | undefined;
} {
  const where: string[] = [];
  const params: number[] = [];
  for (const [key, op] of [
    ["beforeOrdinal", "<"],
    ["afterOrdinal", ">"],
  ] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value))
      throw new TypeError(`options.${key} must be an integer, got ${value}`);
    where.push(`AND ordinal ${op} ?`);
    params.push(value);
  }
  const { limit, order = "oldest-first" } = options;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100_000)) {
    throw new RangeError(`options.limit must be an integer from 1 to 100000, got ${limit}`);
  }
  if (order !== "oldest-first" && order !== "newest-first") {
    throw new TypeError(
      `options.order must be "oldest-first" or "newest-first", got ${JSON.stringify(order)}`,
    );
  }
  return {
    where: where.join(" "),
    params,
    order: order === "newest-first" ? "DESC" : "ASC",
    limit,
  };
}

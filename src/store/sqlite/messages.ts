import { fromSqliteError, HearthError, isSqliteError } from "../../errors.js";
import { markMisuse, requireString } from "../args.js";
import { type LoadOptions, loadWindow, prepare } from "../message-input.js";
import { MESSAGE_COLUMNS, messageFromRaw } from "../rows.js";
import {
  asyncParts,
  type JsonParts,
  jsonTextParts,
  LOOP_PART_CHARS,
  MESSAGE_JSON,
  type MessageTexts,
} from "../transcript-json.js";
import type { Message, NewMessage, StoreCounts, TranscriptEntry } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import {
  type ArchiveAfterOptions,
  archiveAfter,
  type PopOptions,
  pop,
  type ReplaceSuffixOptions,
  type ReplaceSuffixResult,
  replaceSuffix,
  type WaitOptions,
} from "./edits.js";
import {
  archiveSuffix,
  checkAfterOrdinal,
  insertMessage,
  requireLiveOrdinal,
  requireSession,
} from "./message-write.js";
import { casOn, type MetaCas } from "./meta.js";
import { sessionNotFound } from "./session-create.js";

export class Messages {
  constructor(private readonly access: Access) {}

  /** Append one message in its own transaction. Idempotent on `clientId`. */
  async append(
    sessionId: string,
    message: NewMessage,
    options: WaitOptions = {},
  ): Promise<Message> {
    requireString(sessionId, "sessionId");
    const prepared = prepare(message, this.access.now());
    return this.access.writeTransaction(
      (conn) => insertMessage(conn, sessionId, prepared),
      options.signal,
    );
  }

  /** Append several messages in one transaction: all of them or none (D4). */
  async appendBatch(
    sessionId: string,
    messages: readonly NewMessage[],
    options: WaitOptions = {},
  ): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const now = this.access.now();
    const prepared = messages.map((m) => prepare(m, now));
    return this.access.writeTransaction(
      (conn) => prepared.map((m) => insertMessage(conn, sessionId, m)),
      options.signal,
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
    // Filled as items are tried; an Error is built only for one never tried
    // (an Error per item, with its stack, was a measurable share of a turn).
    const results: (AppendResult | undefined)[] = new Array(items.length);
    const done = (): AppendResult[] =>
      Array.from(
        results,
        (r) =>
          r ?? {
            ok: false,
            error: new HearthError("HEARTH_INTERNAL", "internal: the append was not attempted"),
          },
      );
    const prepared = items.map((item, i) => {
      try {
        requireString(item.sessionId, "sessionId");
        return prepare(item.message, now);
      } catch (err) {
        results[i] = { ok: false, error: markMisuse(err) as Error };
        return undefined;
      }
    });
    if (prepared.every((p) => p === undefined)) return done();
    await this.access.writeTransaction((conn) => {
      prepared.forEach((p, i) => {
        if (!p) return;
        const item = items[i]!;
        conn.stmt("SAVEPOINT hearth_item").run();
        try {
          if (item.metaBefore) casOn(conn, item.metaBefore.key, item.metaBefore.decide, now);
          results[i] = { ok: true, message: insertMessage(conn, item.sessionId, p) };
          if (item.metaAfter) casOn(conn, item.metaAfter.key, item.metaAfter.decide, now);
          conn.stmt("RELEASE hearth_item").run();
        } catch (err) {
          conn.stmt("ROLLBACK TO hearth_item").run();
          conn.stmt("RELEASE hearth_item").run();
          // Coded as a single append's error would be (the store's wrapper never sees these).
          const error = isSqliteError(err) ? fromSqliteError(err, this.access.path) : err;
          results[i] = { ok: false, error: error as Error };
        }
      });
    });
    return done();
  }

  /**
   * Save a transcript that may mix loaded and new messages. Messages that
   * carry an `id` are already stored and are never inserted again (D3); the
   * rest are appended in one transaction. Returns the newly stored ones.
   */
  async save(sessionId: string, transcript: readonly TranscriptEntry[]): Promise<Message[]> {
    requireString(sessionId, "sessionId");
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
      return fresh.map((m) => insertMessage(conn, sessionId, m));
    });
  }

  /** The live transcript in order; with `includeHistory`, rewound and compacted messages too. */
  async load(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const rows = readWindow(this.access, sessionId, options);
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
    requireString(sessionId, "sessionId");
    const texts = readWindowJson(this.access, sessionId, options);
    const [whole] = jsonTextParts(sessionId, texts, Number.POSITIVE_INFINITY);
    return new TextEncoder().encode(whole);
  }

  /**
   * `loadJson()` in parts (UTF-8; about 1 MiB each from a reader thread, 64 KiB
   * when built on this thread: transcript-json.ts), for servers
   * that stream a long transcript: the rows are read at once (one
   * snapshot), each part is built when the iterator is asked for it, so a
   * response written with backpressure never holds the whole JSON, and no
   * single step holds the event loop long. With reader threads, the rows
   * stay on the thread and each part crosses as bytes (transferred). End
   * the iterator early with `return()` to free the rows.
   */
  async loadJsonParts(sessionId: string, options: LoadOptions = {}): Promise<JsonParts> {
    requireString(sessionId, "sessionId");
    return asyncParts(
      jsonTextParts(sessionId, readWindowJson(this.access, sessionId, options), LOOP_PART_CHARS),
    );
  }

  /** The last `count` live messages, oldest first: what an agent loop feeds its model. */
  async tail(sessionId: string, count: number): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    return (await this.load(sessionId, { limit: count, order: "newest-first" })).reverse();
  }

  /**
   * Archive every live message after `afterOrdinal` (-1 archives them all), in
   * one transaction. Archived messages stay as history. Returns how many.
   */
  async rewind(
    sessionId: string,
    afterOrdinal: number,
    options: WaitOptions = {},
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    checkAfterOrdinal(afterOrdinal);
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      requireLiveOrdinal(conn, sessionId, afterOrdinal);
      return archiveSuffix(conn, sessionId, afterOrdinal, "rewind", this.access.now());
    }, options.signal);
  }

  /**
   * Archive the last live message, atomically: never a message appended
   * meanwhile by another writer. With `expectLastOrdinal`, only if the last
   * live ordinal is still that one (else HEARTH_CONFLICT, nothing changed).
   * Returns the archived message, or null when no message was live.
   */
  async pop(sessionId: string, options?: PopOptions): Promise<Message | null> {
    requireString(sessionId, "sessionId");
    return pop(this.access, sessionId, options);
  }

  /**
   * rewind() as a compare-and-set: archive every live message after
   * `afterOrdinal` (-1: all) only if the last live ordinal is still
   * `expectLastOrdinal` (else HEARTH_CONFLICT, nothing changed).
   */
  async archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    options: ArchiveAfterOptions,
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    return archiveAfter(this.access, sessionId, afterOrdinal, options);
  }

  /**
   * Archive the live messages after `afterOrdinal` and append `messages`
   * in their place, in one transaction, only if the last live ordinal is
   * still `expectLastOrdinal`. With an `idempotencyKey`, a replay returns
   * the first result.
   */
  async replaceSuffix(
    sessionId: string,
    afterOrdinal: number,
    messages: readonly NewMessage[],
    options: ReplaceSuffixOptions,
  ): Promise<ReplaceSuffixResult> {
    requireString(sessionId, "sessionId");
    return replaceSuffix(this.access, sessionId, afterOrdinal, messages, options);
  }

  /**
   * Compaction: archive the whole live transcript and start it again from a
   * summary message, in one transaction (D4). Returns the summary message.
   */
  async compact(
    sessionId: string,
    summary: { content: string; tokensOut?: number | null },
  ): Promise<{ summary: Message; archived: number }> {
    requireString(sessionId, "sessionId");
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
      const archived = archiveSuffix(conn, sessionId, -1, "compaction", this.access.now());
      return { summary: insertMessage(conn, sessionId, prepared), archived };
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
}

/** The rows of a `load()` window as raw arrays of MESSAGE_COLUMNS, in one statement. */
export function readWindow(
  access: Access,
  sessionId: string,
  options: LoadOptions = {},
): unknown[][] {
  return selectWindow<unknown[]>(access.read(), sessionId, options, MESSAGE_COLUMNS, [], "raw");
}

/**
 * The rows of a `load()` window as `jsonTextParts` joins them
 * (transcript-json.ts): most as their message's JSON text, built by
 * SQLite; the others (JSON content, tool calls, metadata) as columns, read
 * by id in the same read transaction (one snapshot).
 */
export function readWindowJson(
  access: Access,
  sessionId: string,
  options: LoadOptions = {},
): MessageTexts {
  const conn = access.read();
  return conn.db.transaction(() => {
    const rows = selectWindow<string | number>(
      conn,
      sessionId,
      options,
      MESSAGE_JSON,
      [sessionId],
      "pluck",
    );
    const ids = rows.filter((row) => typeof row === "number");
    if (ids.length === 0) return rows as string[];
    const columns = conn
      .stmt(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))`)
      .raw(true)
      .all(JSON.stringify(ids)) as unknown[][];
    const byId = new Map(columns.map((row) => [row[0], row]));
    return rows.map((row) => {
      if (typeof row === "string") return row;
      const found = byId.get(row);
      // Impossible inside one read transaction; never a transcript with a hole.
      if (!found) throw new HearthError("HEARTH_INTERNAL", `internal: message ${row} vanished`);
      return found;
    });
  })();
}

/** Keyset reads on (session_id, active, ordinal): a window of N rows costs about N rows, however long the transcript is. */
function selectWindow<Row>(
  conn: Connection,
  sessionId: string,
  options: LoadOptions,
  select: string,
  selectParams: unknown[],
  mode: "raw" | "pluck",
): Row[] {
  const { where, params, order, limit } = loadWindow(options);
  const history = options.includeHistory ? "" : "AND active = 1";
  const statement = conn.stmt(
    `SELECT ${select} FROM messages WHERE session_id = ? ${history} ${where}
     ORDER BY ordinal ${order}${limit === undefined ? "" : " LIMIT +?"}`,
  );
  const rows = (mode === "raw" ? statement.raw(true) : statement.pluck(true)).all(
    ...selectParams,
    sessionId,
    ...params,
    ...(limit === undefined ? [] : [limit]),
  ) as Row[];
  if (rows.length === 0 && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
    throw sessionNotFound(sessionId);
  }
  return rows;
}

export type AppendResult = { ok: true; message: Message } | { ok: false; error: Error };

export type { LoadOptions } from "../message-input.js";

/**
 * The compare-and-set edits of a transcript's end on SQLite (the rules and
 * options are ../edits.ts): each is one write transaction that reads the
 * last live ordinal and compares it with the caller's before it changes
 * anything. SqliteMessages extends this class.
 */
import { checkReplay, compare, type EditsSql, type SuffixRequest } from "../edits.js";
import { ordinalOutOfRange } from "../message-write.js";
import { type MessageRow, toMessage } from "../rows.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import { archiveSuffix, insertMessage, requireSession } from "./message-write.js";

export class SqliteEdits implements EditsSql {
  constructor(protected readonly access: Access) {}

  pop(sessionId: string, expected: number | undefined, signal?: AbortSignal) {
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      const row = conn
        .stmt(
          "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT 1",
        )
        .get(sessionId) as MessageRow | undefined;
      compare(sessionId, expected, row?.ordinal ?? -1);
      if (!row) return null;
      archiveSuffix(conn, sessionId, row.ordinal - 1, "rewind", this.access.now());
      return toMessage(row);
    }, signal);
  }

  archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    expected: number | undefined,
    signal?: AbortSignal,
  ) {
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      if (expected !== undefined) compare(sessionId, expected, lastLiveOrdinal(conn, sessionId));
      requireLiveOrdinal(conn, sessionId, afterOrdinal);
      return archiveSuffix(conn, sessionId, afterOrdinal, "rewind", this.access.now());
    }, signal);
  }

  replaceSuffix(sessionId: string, r: SuffixRequest, signal?: AbortSignal) {
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      const done = r.key === undefined ? undefined : replayed(conn, sessionId, r.key, r.hash);
      if (done) return done;
      compare(sessionId, r.expected, lastLiveOrdinal(conn, sessionId));
      requireLiveOrdinal(conn, sessionId, r.afterOrdinal);
      const archived = archiveSuffix(conn, sessionId, r.afterOrdinal, "rewind", r.now);
      const stored = r.messages.map((m) => insertMessage(conn, sessionId, m));
      if (r.key !== undefined) {
        conn
          .stmt(
            `INSERT INTO suffix_edits (session_id, idempotency_key, request_hash, archived, message_ids, created_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
          )
          .run(sessionId, r.key, r.hash, archived, JSON.stringify(stored.map((m) => m.id)), r.now);
      }
      return { archived, messages: stored, replayed: false };
    }, signal);
  }
}

/** The first result of a replaceSuffix stored under `key`, if any (checkReplay refuses another request). */
function replayed(conn: Connection, sessionId: string, key: string, hash: string) {
  const row = conn
    .stmt(
      "SELECT request_hash, archived, message_ids FROM suffix_edits WHERE session_id = ? AND idempotency_key = ?",
    )
    .get(sessionId, key) as
    | { request_hash: string; archived: number; message_ids: string }
    | undefined;
  if (!row) return undefined;
  checkReplay(sessionId, key, hash, row.request_hash);
  const rows = conn
    .stmt("SELECT * FROM messages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY ordinal")
    .all(row.message_ids) as MessageRow[];
  return { archived: row.archived, messages: rows.map(toMessage), replayed: true };
}

/** The ordinal of the last live message, -1 when there is none (one index probe). */
function lastLiveOrdinal(conn: Connection, sessionId: string): number {
  const row = conn
    .stmt("SELECT max(ordinal) AS last FROM messages WHERE session_id = ? AND active = 1")
    .get(sessionId) as { last: number | null };
  return row.last ?? -1;
}

/** The `afterOrdinal` of a rewind must be a live message's ordinal, or -1 (everything). */
function requireLiveOrdinal(conn: Connection, sessionId: string, afterOrdinal: number): void {
  if (
    afterOrdinal >= 0 &&
    !conn
      .stmt("SELECT 1 FROM messages WHERE session_id = ? AND ordinal = ? AND active = 1")
      .get(sessionId, afterOrdinal)
  ) {
    throw ordinalOutOfRange(sessionId, afterOrdinal);
  }
}

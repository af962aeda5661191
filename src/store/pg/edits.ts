/**
 * The compare-and-set edits of a transcript's end on PostgreSQL (the rules
 * and options are ../edits.ts). Each is one transaction that first locks
 * the session row, so the last live ordinal it compares cannot move before
 * it commits. PgMessages extends this class.
 */
import { checkReplay, compare, type EditsSql, type SuffixRequest } from "../edits.js";
import { ordinalOutOfRange } from "../message-write.js";
import { toMessage } from "../rows.js";
import type { Message } from "../types.js";
import { archiveSuffix, insertMessage, lockSession } from "./message-write.js";
import type { PgClient, PgDb } from "./pool.js";
import { messageRow, num } from "./rows.js";
import { write } from "./write.js";

export class PgEdits implements EditsSql {
  constructor(protected readonly db: PgDb) {}

  pop(sessionId: string, expected: number | undefined, signal?: AbortSignal) {
    return write(this.db, "pop a message", signal, async (client) => {
      await lockSession(client, sessionId);
      const { rows } = await client.query(
        "SELECT * FROM messages WHERE session_id = $1 AND active = 1 ORDER BY ordinal DESC LIMIT 1",
        [sessionId],
      );
      const row = rows[0] ? messageRow(rows[0]) : undefined;
      compare(sessionId, expected, row?.ordinal ?? -1);
      if (!row) return null;
      await archiveSuffix(client, sessionId, row.ordinal - 1, "rewind", Date.now());
      return toMessage(row);
    });
  }

  archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    expected: number | undefined,
    signal?: AbortSignal,
  ) {
    const doing = expected === undefined ? "rewind a session" : "archive messages";
    return write(this.db, doing, signal, async (client) => {
      await lockSession(client, sessionId);
      if (expected !== undefined)
        compare(sessionId, expected, await lastLiveOrdinal(client, sessionId));
      await requireLiveOrdinal(client, sessionId, afterOrdinal);
      return archiveSuffix(client, sessionId, afterOrdinal, "rewind", Date.now());
    });
  }

  replaceSuffix(sessionId: string, r: SuffixRequest, signal?: AbortSignal) {
    if (r.key?.includes("\u0000"))
      throw new TypeError("options.idempotencyKey contains a NUL character (U+0000)");
    return write(this.db, "replace a transcript suffix", signal, async (client) => {
      await lockSession(client, sessionId);
      const done =
        r.key === undefined ? undefined : await replayed(client, sessionId, r.key, r.hash);
      if (done) return done;
      compare(sessionId, r.expected, await lastLiveOrdinal(client, sessionId));
      await requireLiveOrdinal(client, sessionId, r.afterOrdinal);
      const archived = await archiveSuffix(client, sessionId, r.afterOrdinal, "rewind", r.now);
      const stored: Message[] = [];
      for (const m of r.messages) stored.push(await insertMessage(client, sessionId, m));
      if (r.key !== undefined) {
        await client.query(
          `INSERT INTO suffix_edits (session_id, idempotency_key, request_hash, archived, message_ids, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [sessionId, r.key, r.hash, archived, JSON.stringify(stored.map((m) => m.id)), r.now],
        );
      }
      return { archived, messages: stored, replayed: false };
    });
  }
}

/** The first result of a replaceSuffix stored under `key`, if any (checkReplay refuses another request). */
async function replayed(client: PgClient, sessionId: string, key: string, hash: string) {
  const { rows } = await client.query(
    "SELECT request_hash, archived, message_ids FROM suffix_edits WHERE session_id = $1 AND idempotency_key = $2",
    [sessionId, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  checkReplay(sessionId, key, hash, row.request_hash);
  const ids = (JSON.parse(row.message_ids) as number[]).map(String);
  const stored = await client.query(
    "SELECT * FROM messages WHERE id = ANY($1::bigint[]) ORDER BY ordinal",
    [ids],
  );
  const messages = stored.rows.map((r) => toMessage(messageRow(r)));
  return { archived: num(row.archived), messages, replayed: true };
}

/** The ordinal of the last live message, -1 when there is none. */
async function lastLiveOrdinal(client: PgClient, sessionId: string): Promise<number> {
  const { rows } = await client.query(
    "SELECT max(ordinal) AS last FROM messages WHERE session_id = $1 AND active = 1",
    [sessionId],
  );
  return rows[0]?.last === null || rows[0]?.last === undefined ? -1 : num(rows[0].last);
}

/** The `afterOrdinal` of a rewind must be a live message's ordinal, or -1 (everything). */
async function requireLiveOrdinal(client: PgClient, sessionId: string, afterOrdinal: number) {
  if (afterOrdinal < 0) return;
  const { rowCount } = await client.query(
    "SELECT 1 FROM messages WHERE session_id = $1 AND ordinal = $2 AND active = 1",
    [sessionId, afterOrdinal],
  );
  if (rowCount === 0) throw ordinalOutOfRange(sessionId, afterOrdinal);
}

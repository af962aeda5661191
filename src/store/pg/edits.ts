/**
 * Compare-and-set edits of a transcript's end on PostgreSQL (mirrors
 * ../edits.ts). Each is one transaction that first locks the session row,
 * so the last live ordinal it compares cannot move before it commits.
 */
import { HearthError } from "../../errors.js";
import { prepare } from "../message-input.js";
import { toMessage } from "../rows.js";
import {
  type ArchiveAfterOptions,
  compare,
  expectation,
  type PopOptions,
  type ReplaceSuffixOptions,
  type ReplaceSuffixResult,
  requestHash,
} from "../sqlite/edits.js";
import { checkAfterOrdinal } from "../sqlite/message-write.js";
import type { Message, NewMessage } from "../types.js";
import {
  archiveSuffix,
  insertMessage,
  lastLiveOrdinal,
  lockSession,
  requireLiveOrdinal,
} from "./message-write.js";
import type { PgClient, PgDb } from "./pool.js";
import { messageRow, num, refuseNulMessage } from "./rows.js";
import { write } from "./write.js";

export function pop(
  db: PgDb,
  sessionId: string,
  options: PopOptions = {},
): Promise<Message | null> {
  const expected = expectation(options.expectLastOrdinal, false);
  return write(db, "pop a message", options.signal, async (client) => {
    await lockSession(client, sessionId);
    const { rows } = await client.query(
      "SELECT * FROM messages WHERE session_id = $1 AND active = 1 ORDER BY ordinal DESC LIMIT 1",
      [sessionId],
    );
    const row = rows[0] ? messageRow(rows[0]) : undefined;
    compare(sessionId, expected, row?.ordinal ?? -1);
    if (!row) return null;
    await archiveSuffix(client, sessionId, row.ordinal - 1, "rewind", Date.now());
    return { ...toMessage(row), active: false, archivedReason: "rewind" as const };
  });
}

export function archiveAfter(
  db: PgDb,
  sessionId: string,
  afterOrdinal: number,
  options: ArchiveAfterOptions,
): Promise<number> {
  checkAfterOrdinal(afterOrdinal);
  const expected = expectation(options?.expectLastOrdinal, true);
  return write(db, "archive messages", options.signal, async (client) => {
    await lockSession(client, sessionId);
    compare(sessionId, expected, await lastLiveOrdinal(client, sessionId));
    await requireLiveOrdinal(client, sessionId, afterOrdinal);
    return archiveSuffix(client, sessionId, afterOrdinal, "rewind", Date.now());
  });
}

export function replaceSuffix(
  db: PgDb,
  sessionId: string,
  afterOrdinal: number,
  messages: readonly NewMessage[],
  options: ReplaceSuffixOptions,
): Promise<ReplaceSuffixResult> {
  checkAfterOrdinal(afterOrdinal);
  const expected = expectation(options?.expectLastOrdinal, true);
  if (!Array.isArray(messages)) throw new TypeError("messages must be an array");
  const key = options.idempotencyKey;
  if (key !== undefined && (typeof key !== "string" || key.length < 1 || key.length > 200)) {
    throw new TypeError("options.idempotencyKey must be a string of 1 to 200 characters");
  }
  if (key?.includes("\u0000"))
    throw new TypeError("options.idempotencyKey contains a NUL character (U+0000)");
  const now = Date.now();
  const prepared = messages.map((m) => refuseNulMessage(prepare(m, now)));
  const hash = requestHash(afterOrdinal, prepared);
  return write(db, "replace a transcript suffix", options.signal, async (client) => {
    await lockSession(client, sessionId);
    if (key !== undefined) {
      const done = await replayed(client, sessionId, key, hash);
      if (done) return done;
    }
    compare(sessionId, expected, await lastLiveOrdinal(client, sessionId));
    await requireLiveOrdinal(client, sessionId, afterOrdinal);
    const archived = await archiveSuffix(client, sessionId, afterOrdinal, "rewind", now);
    const stored: Message[] = [];
    for (const m of prepared) stored.push(await insertMessage(client, sessionId, m));
    if (key !== undefined) {
      await client.query(
        `INSERT INTO suffix_edits (session_id, idempotency_key, request_hash, archived, message_ids, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [sessionId, key, hash, archived, JSON.stringify(stored.map((m) => m.id)), now],
      );
    }
    return { archived, messages: stored, replayed: false };
  });
}

async function replayed(
  client: PgClient,
  sessionId: string,
  key: string,
  hash: string,
): Promise<ReplaceSuffixResult | undefined> {
  const { rows } = await client.query(
    "SELECT request_hash, archived, message_ids FROM suffix_edits WHERE session_id = $1 AND idempotency_key = $2",
    [sessionId, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.request_hash !== hash) {
    throw new HearthError(
      "HEARTH_IDEMPOTENCY_CONFLICT",
      `idempotencyKey ${JSON.stringify(key)} was already used in session ${sessionId} for a different replaceSuffix`,
      {
        resource: sessionId,
        hint: "replay with the same request, or use a new idempotencyKey",
        details: { idempotencyKey: key },
      },
    );
  }
  const ids = (JSON.parse(row.message_ids) as number[]).map(String);
  const stored = await client.query(
    "SELECT * FROM messages WHERE id = ANY($1::bigint[]) ORDER BY ordinal",
    [ids],
  );
  return {
    archived: num(row.archived),
    messages: stored.rows.map((r) => toMessage(messageRow(r))),
    replayed: true,
  };
}

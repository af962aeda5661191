/**
 * The row writes every PostgreSQL message operation shares, each on a
 * client inside a transaction (the rules are ../message-write.ts). Ordinals are
 * allocated under the session's row lock, so appends from any number of
 * hosts to one session get distinct, gapless ordinals: the second waits for
 * the first's commit, then reads the counter it left.
 */
import type { PreparedMessage } from "../message-input.js";
import { messageTokens, messageValues, replayOf, storedMessage } from "../message-write.js";
import { sessionNotFound } from "../session-create.js";
import type { Message } from "../types.js";
import type { PgClient } from "./pool.js";
import { messageRow, num } from "./rows.js";

/**
 * One append in one round trip: the UPDATE takes (or already holds) the
 * session's row lock until commit and hands its ordinal to the INSERT; no
 * session row, no slot, nothing inserted. The bench's raw-pg ceiling issues
 * this same statement (workload 17); a group commit's first attempt writes
 * all its messages with one statement instead (group-append.ts). Parameters: session id, role,
 * stored content, content type, name, tool calls, tool call id, tokens in,
 * tokens out, created at, client id, metadata, tokens to add.
 */
export const APPEND_SQL = `WITH slot AS (
       UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
         token_count = token_count + $13::bigint,
         last_activity_at = greatest(last_activity_at, $10::bigint), updated_at = $10::bigint
       WHERE id = $1 RETURNING next_ordinal - 1 AS ordinal)
     INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
       tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
     SELECT $1::text, slot.ordinal, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
       $8::integer, $9::integer, $10::bigint, $11::text, $12::text
     FROM slot RETURNING id, ordinal`;

/**
 * Insert one message at the session's next ordinal. A `clientId` already
 * used in the session returns the stored message when the content is the
 * same, and refuses with HEARTH_IDEMPOTENCY_CONFLICT when it is not. The
 * session row is locked (SELECT ... FOR UPDATE) before the clientId probe:
 * two hosts retrying one clientId at once store it once.
 */
export async function insertMessage(
  client: PgClient,
  sessionId: string,
  m: PreparedMessage,
): Promise<Message> {
  if (m.clientId !== null) {
    const locked = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [
      sessionId,
    ]);
    if (locked.rowCount === 0) throw sessionNotFound(sessionId);
    const existing = await client.query(
      "SELECT * FROM messages WHERE session_id = $1 AND client_id = $2",
      [sessionId, m.clientId],
    );
    if (existing.rows[0]) return replayOf(messageRow(existing.rows[0]), m, sessionId);
  }
  const inserted = await client.query(APPEND_SQL, [
    sessionId,
    ...messageValues(m),
    messageTokens(m),
  ]);
  if (!inserted.rows[0]) throw sessionNotFound(sessionId);
  return storedMessage(m, sessionId, num(inserted.rows[0].id), num(inserted.rows[0].ordinal));
}

/** Archive (never delete) every live message after `afterOrdinal`, keeping the live count in step. */
export async function archiveSuffix(
  client: PgClient,
  sessionId: string,
  afterOrdinal: number,
  reason: "rewind" | "compaction",
  now: number,
): Promise<number> {
  const { rowCount } = await client.query(
    `UPDATE messages SET active = 0, archived_reason = $1
     WHERE session_id = $2 AND active = 1 AND ordinal > $3`,
    [reason, sessionId, afterOrdinal],
  );
  const changes = rowCount ?? 0;
  await client.query(
    `UPDATE sessions SET message_count = message_count - $1, updated_at = $2, last_activity_at = $2
     WHERE id = $3`,
    [changes, now, sessionId],
  );
  return changes;
}

/**
 * The session must exist; its row is locked until commit, so edits of one
 * session (and appends to it) run one after another across hosts.
 */
export async function lockSession(client: PgClient, sessionId: string): Promise<void> {
  const { rowCount } = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [
    sessionId,
  ]);
  if (rowCount === 0) throw sessionNotFound(sessionId);
}

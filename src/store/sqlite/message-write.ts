import type { PreparedMessage } from "../message-input.js";
import { messageTokens, messageValues, replayOf, storedMessage } from "../message-write.js";
import { type MessageRow, type SessionRow, toSession } from "../rows.js";
import { sessionNotFound } from "../session-create.js";
import type { Message, Session } from "../types.js";
import type { Connection } from "./connection.js";

/**
 * The row writes every message operation shares. Each runs on a connection
 * that is inside a write transaction; the rules are ../message-write.ts.
 */

/**
 * Insert one message at the session's next ordinal. A `clientId` already
 * used in the session returns the message stored with it (live or
 * archived) when the content is the same, and refuses with
 * HEARTH_IDEMPOTENCY_CONFLICT when it is not (replayOf).
 */
export function insertMessage(
  conn: Connection,
  sessionId: string,
  m: PreparedMessage,
  report?: { session?: Session },
): Message {
  if (m.clientId !== null) {
    const existing = conn
      .stmt("SELECT * FROM messages WHERE session_id = ? AND client_id = ?")
      .get(sessionId, m.clientId) as MessageRow | undefined;
    if (existing) return replayOf(existing, m, sessionId);
  }
  // With `report`, the UPDATE returns the whole session row as it leaves it:
  // the caller needs no read of the session after the commit (a statement
  // and a read transaction on the read-only connection per turn).
  const slot = conn
    .stmt(report ? SLOT_SQL_SESSION : SLOT_SQL)
    .get(messageTokens(m), m.createdAt, m.createdAt, sessionId) as
    | (Partial<SessionRow> & { ordinal: number })
    | undefined;
  if (!slot) throw sessionNotFound(sessionId);
  if (report) report.session = toSession(slot as SessionRow);
  const { lastInsertRowid } = conn
    .stmt(
      `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
         tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(sessionId, slot.ordinal, ...messageValues(m));
  return storedMessage(m, sessionId, Number(lastInsertRowid), slot.ordinal);
}

const SLOT_UPDATE = `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
         token_count = token_count + ?, last_activity_at = max(last_activity_at, ?), updated_at = ?
       WHERE id = ?`;
const SLOT_SQL = `${SLOT_UPDATE} RETURNING next_ordinal - 1 AS ordinal`;
const SLOT_SQL_SESSION = `${SLOT_UPDATE} RETURNING *, next_ordinal - 1 AS ordinal`;

/**
 * Archive (never delete, D2) every live message after `afterOrdinal` as
 * history with `reason`, keeping the session's live count in step.
 * Returns how many.
 */
export function archiveSuffix(
  conn: Connection,
  sessionId: string,
  afterOrdinal: number,
  reason: "rewind" | "compaction",
  now: number,
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
    .run(changes, now, now, sessionId);
  return changes;
}

export function requireSession(conn: Connection, sessionId: string): void {
  if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
    throw sessionNotFound(sessionId);
  }
}

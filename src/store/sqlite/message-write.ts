import { HearthError } from "../../errors.js";
import type { PreparedMessage } from "../message-input.js";
import { type MessageRow, toMessage } from "../rows.js";
import type { Message } from "../types.js";
import type { Connection } from "./connection.js";
import { sessionNotFound } from "./session-create.js";

/**
 * The row writes every message operation shares. Each runs on a connection
 * that is inside a write transaction.
 */

/**
 * Insert one message at the session's next ordinal. A `clientId` already
 * used in the session returns the message stored with it (live or
 * archived) when the content is the same, and refuses with
 * HEARTH_IDEMPOTENCY_CONFLICT when it is not (docs/api.md, "Semantics").
 */
export function insertMessage(conn: Connection, sessionId: string, m: PreparedMessage): Message {
  if (m.clientId !== null) {
    const existing = conn
      .stmt("SELECT * FROM messages WHERE session_id = ? AND client_id = ?")
      .get(sessionId, m.clientId) as MessageRow | undefined;
    if (existing) {
      if (!sameContent(existing, m)) throw clientIdReused(sessionId, m.clientId, existing);
      return toMessage(existing);
    }
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
         tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(sessionId, slot.ordinal, ...messageValues(m));
  return storedMessage(m, sessionId, Number(lastInsertRowid), slot.ordinal);
}

/**
 * The values of a message row after its session id and ordinal, in the
 * column order both backends' INSERT uses: role, content (as stored),
 * content type, name, tool calls, tool call id, tokens in, tokens out,
 * created at, client id, metadata.
 */
export function messageValues(m: PreparedMessage): unknown[] {
  return [
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
    m.metadataJson,
  ];
}

/**
 * The messages this process built from a fresh insert (storedMessage), as
 * opposed to a clientId replay that returned a row stored before. A fresh
 * message cannot have been answered yet, so a turn spares the read that
 * looks for the answer to a replay. Only this object counts: a copy, or a
 * message loaded later, reads as "cannot tell" and gets the read.
 */
const freshInserts = new WeakSet<Message>();

/** Whether `message` is the very object a fresh insert returned (see freshInserts). */
export function isFreshInsert(message: Message): boolean {
  return freshInserts.has(message);
}

/** The Message a fresh insert of `m` stored, without reading it back. */
export function storedMessage(
  m: PreparedMessage,
  sessionId: string,
  id: number,
  ordinal: number,
): Message {
  const message: Message = {
    id,
    sessionId,
    ordinal,
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
    metadata: m.metadata,
  };
  freshInserts.add(message);
  return message;
}

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

/** The `afterOrdinal` of a rewind must be a live message's ordinal, or -1 (everything). */
export function requireLiveOrdinal(
  conn: Connection,
  sessionId: string,
  afterOrdinal: number,
): void {
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
}

export function checkAfterOrdinal(afterOrdinal: unknown): asserts afterOrdinal is number {
  if (!Number.isInteger(afterOrdinal) || (afterOrdinal as number) < -1) {
    throw new RangeError(`afterOrdinal must be an integer >= -1, got ${String(afterOrdinal)}`);
  }
}

/** A stored row is the same message as `m` (a clientId replay), on either backend. */
export function sameContent(row: MessageRow, m: PreparedMessage): boolean {
  return (
    row.role === m.role &&
    row.content === m.stored &&
    row.content_type === m.contentType &&
    row.name === m.name &&
    row.tool_calls === m.toolCallsJson &&
    row.tool_call_id === m.toolCallId
  );
}

export function clientIdReused(
  sessionId: string,
  clientId: string,
  existing: MessageRow,
): HearthError {
  return new HearthError(
    "HEARTH_IDEMPOTENCY_CONFLICT",
    `clientId ${JSON.stringify(clientId)} is already used in session ${sessionId} by message ${existing.id} (ordinal ${existing.ordinal}) with different content`,
    {
      resource: sessionId,
      hint: "a clientId names one message forever: retry with the same content, or use a new clientId",
      details: { clientId, messageId: existing.id, ordinal: existing.ordinal },
    },
  );
}

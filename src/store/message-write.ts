/**
 * The rules of a message row write, the same on every backend: the values
 * an INSERT takes, the Message a fresh insert returns without reading it
 * back, what a clientId replay returns or refuses, and the refusals of an
 * edit. Each backend's message-write.ts runs them inside its transaction.
 */
import { HearthError } from "../errors.js";
import type { PreparedMessage } from "./message-input.js";
import { type MessageRow, toMessage } from "./rows.js";
import type { Message } from "./types.js";

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

/** What a message adds to its session's token count. */
export function messageTokens(m: PreparedMessage): number {
  return (m.tokensIn ?? 0) + (m.tokensOut ?? 0);
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
 * A clientId already used in the session: the message stored with it
 * (live or archived) when the content is the same, else
 * HEARTH_IDEMPOTENCY_CONFLICT (docs/api.md, "Semantics").
 */
export function replayOf(existing: MessageRow, m: PreparedMessage, sessionId: string): Message {
  if (!sameContent(existing, m)) throw clientIdReused(sessionId, m.clientId!, existing);
  return toMessage(existing);
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

function clientIdReused(sessionId: string, clientId: string, existing: MessageRow): HearthError {
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

/** The `afterOrdinal` of a rewind must be a live message's ordinal, or -1 (everything). */
export function ordinalOutOfRange(sessionId: string, afterOrdinal: number): HearthError {
  return new HearthError(
    "HEARTH_ORDINAL_OUT_OF_RANGE",
    `session ${sessionId} has no live message with ordinal ${afterOrdinal}`,
    { resource: sessionId, hint: "load the transcript to see its ordinals" },
  );
}

/** save(): an entry with an `id` must be a stored message of that session (D3). */
export function requireOwnEntry(id: number, owner: unknown, sessionId: string): void {
  if (owner !== sessionId) {
    throw new RangeError(
      `transcript entry with id ${id} is not a stored message of session ${sessionId}`,
    );
  }
}

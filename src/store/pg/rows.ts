/**
 * Rows as `pg` returns them, made the shapes the SQLite modules use: BIGINT
 * columns (ids, timestamps, counts) arrive as strings and become numbers
 * here, explicitly, so toSession/toMessage serve both backends. Also the
 * one rule PostgreSQL adds to the input rules: text cannot hold NUL.
 */
import type { PreparedMessage } from "../message-input.js";
import { type MessageRow, messageFromRaw, type SessionRow } from "../rows.js";
import type { Message } from "../types.js";

type Raw = Record<string, unknown>;

/** A BIGINT (or numeric count) as a number; null stays null. */
export function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/**
 * Every column of a SessionRow, for a statement that names them rather
 * than `*`: a prepared statement's result must keep its shape when a later
 * migration adds a column ("cached plan must not change result type").
 */
export const SESSION_ROW_COLUMNS = [
  "id",
  "profile",
  "source",
  "chat_key",
  "title",
  "title_source",
  "created_at",
  "updated_at",
  "last_activity_at",
  "ended_at",
  "end_reason",
  "parent_id",
  "pinned",
  "archived",
  "hidden",
  "handoff_state",
  "handoff_platform",
  "handoff_owner",
  "handoff_error",
  "handoff_updated_at",
  "message_count",
  "token_count",
  "owner_id",
  "metadata",
] as const satisfies readonly (keyof SessionRow)[];

// Compile-time: the list names every SessionRow field (a field added to one and not the other fails the build).
type Missing = Exclude<keyof SessionRow, (typeof SESSION_ROW_COLUMNS)[number]>;
const everySessionColumn: [Missing] extends [never] ? true : Missing = true;
void everySessionColumn;

export function sessionRow(r: Raw): SessionRow {
  return {
    ...(r as unknown as SessionRow),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    last_activity_at: num(r.last_activity_at),
    ended_at: numOrNull(r.ended_at),
    handoff_updated_at: numOrNull(r.handoff_updated_at),
    token_count: num(r.token_count),
  };
}

export function messageRow(r: Raw): MessageRow {
  return { ...(r as unknown as MessageRow), id: num(r.id), created_at: num(r.created_at) };
}

/** A message from a row of MESSAGE_COLUMNS read as an array (queryArrays): id and created_at are BIGINT. */
export function messageFromArray(sessionId: string, r: unknown[]): Message {
  r[0] = num(r[0]);
  r[10] = num(r[10]);
  return messageFromRaw(sessionId, r);
}

/**
 * PostgreSQL text cannot hold NUL (U+0000), SQLite's can: refuse such a
 * string the way bad input is refused (a TypeError naming the field, before
 * any transaction, so nothing is written).
 */
export function refuseNul(value: unknown, field: string): void {
  if (typeof value === "string" && value.includes("\u0000")) {
    throw new TypeError(
      `${field} contains a NUL character (U+0000), which PostgreSQL text cannot store; remove it or store the value as JSON`,
    );
  }
}

/** refuseNul over every text column a message writes (JSON is escaped, so only raw text can hold NUL). */
export function refuseNulMessage(m: PreparedMessage): PreparedMessage {
  refuseNul(m.stored, "message.content");
  refuseNul(m.name, "message.name");
  refuseNul(m.toolCallId, "message.toolCallId");
  refuseNul(m.clientId, "message.clientId");
  return m;
}

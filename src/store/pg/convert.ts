/**
 * What every PostgreSQL store module needs between `pg` and hearth's types:
 * BIGINT columns arrive as strings (numbers here, explicitly per column,
 * never a global type parser), and text that PostgreSQL cannot hold (NUL,
 * U+0000, which SQLite text can) is refused before anything is written,
 * the way message-input.ts refuses bad input: a TypeError naming the field.
 */
import { type MessageRow, type SessionRow, toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";

export function refuseNul(field: string, value: unknown): void {
  if (typeof value === "string" && value.includes("\u0000"))
    throw new TypeError(`${field} must not contain NUL (\\u0000): PostgreSQL text cannot hold it`);
}

/** A BIGINT (or count(*), or sum()) from `pg` as a number; null and undefined stay null. */
export function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Like num(), for a NOT NULL column. */
export function int(value: unknown): number {
  return Number(value);
}

const SESSION_BIGINTS = [
  "created_at",
  "updated_at",
  "last_activity_at",
  "ended_at",
  "handoff_updated_at",
  "token_count",
] as const;

/** A sessions row from `pg` as a Session (its BIGINT columns made numbers). */
export function pgSession(row: Record<string, unknown>): Session {
  const r = { ...row };
  for (const c of SESSION_BIGINTS) r[c] = num(r[c]);
  return toSession(r as unknown as SessionRow);
}

/** A messages row from `pg` as a Message (id and created_at made numbers). */
export function pgMessage(row: Record<string, unknown>): Message {
  return toMessage({ ...row, id: int(row.id), created_at: int(row.created_at) } as MessageRow);
}

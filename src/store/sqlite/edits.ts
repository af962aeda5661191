import { nodeCrypto } from "../../builtins.js";
import { HearthError } from "../../errors.js";
import { type PreparedMessage, prepare } from "../message-input.js";
import { type MessageRow, toMessage } from "../rows.js";
import type { Message, NewMessage } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import {
  archiveSuffix,
  checkAfterOrdinal,
  insertMessage,
  requireLiveOrdinal,
  requireSession,
} from "./message-write.js";

/**
 * Compare-and-set edits of a transcript's end (what an agent loop's
 * "undo the last item" and "retry this turn" need). Each is one write
 * transaction: it reads the last live ordinal, compares it with what the
 * caller saw, and changes nothing (HEARTH_CONFLICT) when another writer
 * got there first. Archived messages stay as history (D2).
 */

/** Options every call that can wait for the write lock takes. */
export interface WaitOptions {
  /** Abort the wait for the write lock: the call rejects with HEARTH_ABORTED and writes nothing. */
  signal?: AbortSignal;
}

export interface PopOptions extends WaitOptions {
  /** The last live ordinal the caller saw (-1: none); a different one is HEARTH_CONFLICT. */
  expectLastOrdinal?: number;
}

export interface ArchiveAfterOptions extends WaitOptions {
  /** Required: the last live ordinal the caller saw (-1: none). */
  expectLastOrdinal: number;
}

export interface ReplaceSuffixOptions extends ArchiveAfterOptions {
  /**
   * Replaying a committed replaceSuffix with the same key (per session)
   * returns its first result and changes nothing; the same key with a
   * different request is HEARTH_IDEMPOTENCY_CONFLICT. 1 to 200 characters.
   */
  idempotencyKey?: string;
}

export interface ReplaceSuffixResult {
  /** How many live messages were archived. */
  archived: number;
  /** The new live messages, as stored (as they are now, on a replay). */
  messages: Message[];
  /** true when this call replayed an earlier one with the same idempotencyKey. */
  replayed: boolean;
}

/** Archive the last live message; null when there is none. */
export function pop(
  access: Access,
  sessionId: string,
  options: PopOptions = {},
): Promise<Message | null> {
  const expected = expectation(options.expectLastOrdinal, false);
  return access.writeTransaction((conn) => {
    requireSession(conn, sessionId);
    const row = conn
      .stmt(
        "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT 1",
      )
      .get(sessionId) as MessageRow | undefined;
    compare(sessionId, expected, row?.ordinal ?? -1);
    if (!row) return null;
    archiveSuffix(conn, sessionId, row.ordinal - 1, "rewind", access.now());
    return { ...toMessage(row), active: false, archivedReason: "rewind" as const };
  }, options.signal);
}

/** Archive every live message after `afterOrdinal` if the last live ordinal is still the expected one. */
export function archiveAfter(
  access: Access,
  sessionId: string,
  afterOrdinal: number,
  options: ArchiveAfterOptions,
): Promise<number> {
  checkAfterOrdinal(afterOrdinal);
  const expected = expectation(options?.expectLastOrdinal, true);
  return access.writeTransaction((conn) => {
    requireSession(conn, sessionId);
    compare(sessionId, expected, lastLiveOrdinal(conn, sessionId));
    requireLiveOrdinal(conn, sessionId, afterOrdinal);
    return archiveSuffix(conn, sessionId, afterOrdinal, "rewind", access.now());
  }, options.signal);
}

/** Archive the live suffix after `afterOrdinal` and append `messages` in its place, in one transaction. */
export function replaceSuffix(
  access: Access,
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
  const now = access.now();
  const prepared = messages.map((m) => prepare(m, now));
  const hash = requestHash(afterOrdinal, prepared);
  return access.writeTransaction((conn) => {
    requireSession(conn, sessionId);
    if (key !== undefined) {
      const done = replayed(conn, sessionId, key, hash);
      if (done) return done;
    }
    compare(sessionId, expected, lastLiveOrdinal(conn, sessionId));
    requireLiveOrdinal(conn, sessionId, afterOrdinal);
    const archived = archiveSuffix(conn, sessionId, afterOrdinal, "rewind", now);
    const stored = prepared.map((m) => insertMessage(conn, sessionId, m));
    if (key !== undefined) {
      conn
        .stmt(
          `INSERT INTO suffix_edits (session_id, idempotency_key, request_hash, archived, message_ids, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(sessionId, key, hash, archived, JSON.stringify(stored.map((m) => m.id)), now);
    }
    return { archived, messages: stored, replayed: false };
  }, options.signal);
}

/** The ordinal of the last live message, -1 when there is none (one index probe). */
export function lastLiveOrdinal(conn: Connection, sessionId: string): number {
  const row = conn
    .stmt("SELECT max(ordinal) AS last FROM messages WHERE session_id = ? AND active = 1")
    .get(sessionId) as { last: number | null };
  return row.last ?? -1;
}

export function expectation(value: unknown, required: boolean): number | undefined {
  if (value === undefined && !required) return undefined;
  if (!Number.isInteger(value) || (value as number) < -1) {
    throw new TypeError(
      `options.expectLastOrdinal must be the last live ordinal you saw (an integer >= -1; -1 for none), got ${String(value)}`,
    );
  }
  return value as number;
}

export function compare(sessionId: string, expected: number | undefined, actual: number): void {
  if (expected === undefined || expected === actual) return;
  throw new HearthError(
    "HEARTH_CONFLICT",
    `session ${sessionId} changed: its last live ordinal is ${actual}, not ${expected}; nothing was changed`,
    {
      resource: sessionId,
      hint: "load the tail again (messages.tail) and decide again with what it shows",
      details: { expectedLastOrdinal: expected, lastOrdinal: actual },
    },
  );
}

function replayed(
  conn: Connection,
  sessionId: string,
  key: string,
  hash: string,
): ReplaceSuffixResult | undefined {
  const row = conn
    .stmt(
      "SELECT request_hash, archived, message_ids FROM suffix_edits WHERE session_id = ? AND idempotency_key = ?",
    )
    .get(sessionId, key) as
    | { request_hash: string; archived: number; message_ids: string }
    | undefined;
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
  const rows = conn
    .stmt("SELECT * FROM messages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY ordinal")
    .all(row.message_ids) as MessageRow[];
  return { archived: row.archived, messages: rows.map(toMessage), replayed: true };
}

export function requestHash(afterOrdinal: number, prepared: readonly PreparedMessage[]): string {
  const shape = prepared.map((m) => [
    m.role,
    m.contentType,
    m.stored,
    m.name,
    m.toolCallsJson,
    m.toolCallId,
    m.tokensIn,
    m.tokensOut,
    m.clientId,
    m.metadataJson,
  ]);
  return nodeCrypto()
    .createHash("sha256")
    .update(JSON.stringify([afterOrdinal, shape]))
    .digest("hex");
}

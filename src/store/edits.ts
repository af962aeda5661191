/**
 * Compare-and-set edits of a transcript's end (what an agent loop's
 * "undo the last item" and "retry this turn" need), the backend-neutral
 * part: their options, results and rules. Each edit is one write
 * transaction in the backend (sqlite/edits.ts, pg/edits.ts): it reads the
 * last live ordinal, compares it with what the caller saw (compare), and
 * changes nothing (HEARTH_CONFLICT) when another writer got there first.
 * Archived messages stay as history (D2).
 */
import { nodeCrypto } from "../builtins.js";
import { HearthError } from "../errors.js";
import { checkAfterOrdinal, type PreparedMessage } from "./message-input.js";
import type { Message, NewMessage } from "./types.js";

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

/**
 * What a backend does for the edits: each one transaction that compares
 * the last live ordinal (compare) before it changes anything.
 */
export interface EditsSql {
  /** The last live message as it was before this archived it (popped() makes it history), or null. */
  pop(
    sessionId: string,
    expected: number | undefined,
    signal?: AbortSignal,
  ): Promise<Message | null>;
  /** Archive the live messages after `afterOrdinal`; with `expected` undefined, whatever the last live ordinal (rewind). */
  archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    expected: number | undefined,
    signal?: AbortSignal,
  ): Promise<number>;
  replaceSuffix(
    sessionId: string,
    request: SuffixRequest,
    signal?: AbortSignal,
  ): Promise<ReplaceSuffixResult>;
}

/** A replaceSuffix validated and prepared before its transaction. */
export interface SuffixRequest {
  afterOrdinal: number;
  expected: number;
  messages: PreparedMessage[];
  key: string | undefined;
  /** requestHash of the request: what a replay with the same key must match. */
  hash: string;
  now: number;
}

/** Validate a replaceSuffix and prepare its messages, so bad input changes nothing. */
export function suffixRequest(
  afterOrdinal: number,
  messages: readonly NewMessage[],
  options: ReplaceSuffixOptions,
  now: number,
  prepare: (m: NewMessage, now: number) => PreparedMessage,
): SuffixRequest {
  checkAfterOrdinal(afterOrdinal);
  const expected = expectation(options?.expectLastOrdinal, true);
  if (!Array.isArray(messages)) throw new TypeError("messages must be an array");
  const key = options.idempotencyKey;
  if (key !== undefined && (typeof key !== "string" || key.length < 1 || key.length > 200)) {
    throw new TypeError("options.idempotencyKey must be a string of 1 to 200 characters");
  }
  const prepared = messages.map((m) => prepare(m, now));
  return {
    afterOrdinal,
    expected,
    messages: prepared,
    key,
    hash: requestHash(afterOrdinal, prepared),
    now,
  };
}

export function expectation(value: unknown, required: true): number;
export function expectation(value: unknown, required: boolean): number | undefined;
export function expectation(value: unknown, required: boolean): number | undefined {
  if (value === undefined && !required) return undefined;
  if (!Number.isInteger(value) || (value as number) < -1) {
    throw new TypeError(
      `options.expectLastOrdinal must be the last live ordinal you saw (an integer >= -1; -1 for none), got ${String(value)}`,
    );
  }
  return value as number;
}

/** Inside the edit's transaction: the last live ordinal must still be the one the caller saw. */
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

/** Inside the transaction: a stored replaceSuffix under the same key must be the same request. */
export function checkReplay(
  sessionId: string,
  key: string,
  hash: string,
  storedHash: string,
): void {
  if (storedHash === hash) return;
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

/** The message pop() archived, as it is now. */
export function popped(message: Message): Message {
  return { ...message, active: false, archivedReason: "rewind" as const };
}

function requestHash(afterOrdinal: number, prepared: readonly PreparedMessage[]): string {
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

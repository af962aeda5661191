import { messageFromRaw } from "./rows.js";

/**
 * Characters of JSON text per part of a transcript's JSON built on a reader
 * thread (about: a part ends after the message that reaches it). The
 * caller's loop only writes each part to its socket, a short task; larger
 * parts mean fewer hand-overs (a 100,000-message transcript of 35 MB is
 * about 35 parts).
 */
export const JSON_PART_CHARS = 1024 * 1024;

/**
 * The same, when the parts are built on the caller's own event loop
 * (`store.readerThreads: 0`, or a small window): building one holds the
 * loop, so parts are smaller (a few ms each) and other work runs between
 * them.
 */
export const LOOP_PART_CHARS = 64 * 1024;

/**
 * Where a message row holds only what SQLite spells as `JSON.stringify`
 * does: text content, no tool calls, no metadata. Those three are stored
 * JSON text, which `JSON.parse` then `JSON.stringify` may respell (spaces,
 * escapes, number forms). The table is STRICT: every other column holds
 * the type hearth writes (an integer, a text, or NULL), whoever wrote it.
 */
const PLAIN_ROW = "content_type = 'text' AND tool_calls IS NULL AND metadata IS NULL";

/**
 * A message row as the JSON text of its Message, built by SQLite (one
 * column, read with `pluck`): exactly what `JSON.stringify` gives for
 * `messageFromRaw` of the row, the same keys in the same order, without a
 * row array, an object and a stringify per message on the thread that
 * reads it (about 40 % of the CPU of a 100,000-message transcript:
 * docs/benchmarks-history.md). Rows that are not PLAIN_ROW come as their
 * id (a number), to be read as columns and built in JavaScript. The first
 * parameter is the session id.
 */
export const MESSAGE_JSON = `CASE WHEN ${PLAIN_ROW}
  THEN json_object('id', id, 'sessionId', ?, 'ordinal', ordinal, 'role', role, 'content', content,
    'name', name, 'toolCalls', NULL, 'toolCallId', tool_call_id, 'tokensIn', tokens_in,
    'tokensOut', tokens_out, 'createdAt', created_at, 'active', json(iif(active = 1, 'true', 'false')),
    'archivedReason', archived_reason, 'clientId', client_id, 'metadata', NULL)
  ELSE id END`;

/**
 * Rows of a transcript window as `readWindowJson` gives them: each a
 * message's JSON text (MESSAGE_JSON), or its MESSAGE_COLUMNS as an array.
 */
export type MessageTexts = readonly (string | unknown[])[];

/** The JSON text of one row of MessageTexts. */
function messageText(sessionId: string, row: string | unknown[]): string {
  return typeof row === "string" ? row : JSON.stringify(messageFromRaw(sessionId, row));
}

/**
 * A transcript's JSON (exactly `JSON.stringify` of `messages.load()`'s
 * array) as text parts, each joined when it is asked for, from rows read
 * beforehand in one read transaction (one consistent snapshot, whatever is
 * written while the parts are sent).
 */
export function* jsonTextParts(
  sessionId: string,
  rows: MessageTexts,
  partChars: number,
): Generator<string, void, undefined> {
  yield* textArrayParts(rows, (row) => messageText(sessionId, row), partChars);
}

/** `JSON.stringify(items.map(toValue))` as text parts of about `partChars` characters. */
export function jsonArrayParts<T>(
  items: readonly T[],
  toValue: (item: T) => unknown,
  partChars: number,
): Generator<string, void, undefined> {
  return textArrayParts(items, (item) => JSON.stringify(toValue(item)), partChars);
}

/** `[` + the items' JSON texts joined by `,` + `]`, as text parts of about `partChars` characters. */
function* textArrayParts<T>(
  items: readonly T[],
  toText: (item: T) => string,
  partChars: number,
): Generator<string, void, undefined> {
  let text = "[";
  for (let i = 0; i < items.length; i++) {
    if (i > 0) text += ",";
    text += toText(items[i]!);
    if (text.length >= partChars) {
      yield text;
      text = "";
    }
  }
  yield `${text}]`;
}

/** What `messages.loadJsonParts` resolves with: the parts, UTF-8, in order. */
export interface JsonParts extends AsyncIterableIterator<Uint8Array> {
  /**
   * Hand a part back once it is written and no longer read (optional): a
   * reader thread reuses its memory for a later part, so the bytes of a
   * long transcript never pile up on the caller's heap as memory its
   * garbage collector must find. Never touch the part after this.
   */
  release(part: Uint8Array): void;
}

/**
 * Text parts as the UTF-8 parts callers of `loadJsonParts` get, each part
 * after the first built in a task of its own: a socket that takes every
 * write at once (a fast reader on loopback) never drains the whole
 * transcript in one chain of microtasks while other requests wait.
 */
export function asyncParts(parts: Generator<string, void, undefined>): JsonParts {
  const encoder = new TextEncoder();
  async function* each(): AsyncGenerator<Uint8Array, void, undefined> {
    for (let next = parts.next(); !next.done; next = parts.next()) {
      yield encoder.encode(next.value);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return Object.assign(each(), { release: (_part: Uint8Array): void => undefined });
}

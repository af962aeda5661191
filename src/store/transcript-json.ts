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
 * A transcript's JSON (exactly `JSON.stringify` of `messages.load()`'s
 * array) as UTF-8 parts, each built when it is asked for, from rows read
 * beforehand in one statement (one consistent snapshot, whatever is written
 * while the parts are sent).
 */
export function* jsonParts(
  sessionId: string,
  rows: readonly unknown[][],
  partChars: number,
): Generator<Uint8Array, void, undefined> {
  const encoder = new TextEncoder();
  let text = "[";
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) text += ",";
    text += JSON.stringify(messageFromRaw(sessionId, rows[i]!));
    if (text.length >= partChars) {
      yield encoder.encode(text);
      text = "";
    }
  }
  yield encoder.encode(`${text}]`);
}

/**
 * A sync generator of parts as the async iterator callers of `loadJsonParts`
 * get, each part after the first built in a task of its own: a socket that
 * takes every write at once (a fast reader on loopback) never drains the
 * whole transcript in one chain of microtasks while other requests wait.
 */
export async function* asyncParts(
  parts: Generator<Uint8Array, void, undefined>,
): AsyncGenerator<Uint8Array, void, undefined> {
  for (let next = parts.next(); !next.done; next = parts.next()) {
    yield next.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

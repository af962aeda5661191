/**
 * Two helpers of the gateway's request handlers that outlive one call: the
 * drain follower of a turn, and the transcript response written part by part.
 */
import type { ServerResponse } from "node:http";
import type { JsonParts } from "../store/transcript-json.js";

/** What followDrain stops: an AbortController, or a turn's TurnStop. */
interface Abortable {
  abort(reason?: unknown): void;
}

/** The turns following each draining signal, and its one listener (present while any follows). */
const followers = new WeakMap<AbortSignal, { turns: Set<Abortable>; onDrain: () => void }>();

const NOTHING = () => {};

/**
 * Abort `turn` when `draining` aborts, until the returned function is
 * called. The draining signal lives as long as the gateway and must not
 * collect one entry per turn: the turns in flight share one listener on it,
 * added when the first follows and removed when the last lets go (adding
 * and removing an EventTarget listener per request was a measurable share
 * of a turn's CPU).
 */
export function followDrain(draining: AbortSignal | undefined, turn: Abortable): () => void {
  if (!draining) return NOTHING;
  if (draining.aborted) {
    turn.abort(draining.reason);
    return NOTHING;
  }
  let entry = followers.get(draining);
  if (!entry) {
    const turns = new Set<Abortable>();
    const onDrain = () => {
      followers.delete(draining);
      for (const t of turns) t.abort(draining.reason);
      turns.clear();
    };
    entry = { turns, onDrain };
    followers.set(draining, entry);
  }
  const { turns, onDrain } = entry;
  if (turns.size === 0) draining.addEventListener("abort", onDrain, { once: true });
  turns.add(turn);
  return () => {
    if (!turns.delete(turn) || turns.size > 0 || draining.aborted) return;
    draining.removeEventListener("abort", onDrain);
  };
}

/**
 * Write `{...session head, "messages": [...]}` with backpressure: the next
 * part is asked for once the socket has drained, and each part goes back to
 * the reader thread when its write is done. A client that hangs up ends the
 * stream (the thread drops the rows); a failure mid-way cuts the response,
 * so the client never takes a truncated body for a whole one.
 */
export async function sendTranscript(
  raw: ServerResponse,
  head: string,
  parts: JsonParts,
): Promise<void> {
  let closed = false;
  const onClose = (): void => {
    closed = true;
  };
  raw.once("close", onClose);
  try {
    raw.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    raw.write(head);
    for await (const part of parts) {
      if (closed) break;
      const bytes = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
      const more = raw.write(bytes, (err) => {
        if (!err) parts.release(part);
      });
      if (!more && !closed) await drained(raw);
    }
    if (!closed) raw.end("}");
  } catch {
    raw.destroy();
  } finally {
    raw.off("close", onClose);
    await parts.return?.();
  }
}

/** Resolves when `raw` can take more, or has closed. */
function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      raw.off("drain", done);
      raw.off("close", done);
      resolve();
    };
    raw.once("drain", done);
    raw.once("close", done);
  });
}

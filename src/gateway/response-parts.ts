/**
 * Two helpers of the gateway's request handlers that outlive one call: the
 * drain follower of a turn, and the transcript response written part by part.
 */
import type { ServerResponse } from "node:http";
import type { JsonParts } from "../store/transcript-json.js";

/**
 * Abort `turn` when `draining` aborts, until the returned function is
 * called (the listener is removed then: the draining signal lives as long
 * as the gateway and must not collect one entry per turn).
 */
export function followDrain(draining: AbortSignal | undefined, turn: AbortController): () => void {
  if (!draining) return () => {};
  if (draining.aborted) {
    turn.abort(draining.reason);
    return () => {};
  }
  const onDrain = () => turn.abort(draining.reason);
  draining.addEventListener("abort", onDrain, { once: true });
  return () => draining.removeEventListener("abort", onDrain);
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

import { createInterface, type Interface } from "node:readline";
import type { Readable } from "node:stream";

/**
 * The lines of `input` (a socket, a child's pipe), for whoever owns it.
 * readline's Interface emits every 'error' of its input again on itself,
 * and an 'error' nobody listens to throws: a peer that dies with data of
 * ours unread (kill -9) resets the socket (ECONNRESET), and that would end
 * this process with a stack trace although the socket's owner handles the
 * socket's errors. The owner handles them (its 'error' and 'close'
 * listeners); the Interface's copy is dropped here.
 */
export function readLines(input: Readable): Interface {
  const lines = createInterface({ input });
  lines.on("error", () => undefined);
  return lines;
}

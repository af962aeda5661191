import { readSync } from "node:fs";
import type { FileGuard } from "../../files/guard.js";
import type { HandoffWakes, HandoffWatch } from "../handoffs.js";

/** The wal-index header: change counter, frame count, salts and checksums (two copies). */
const HEADER_BYTES = 96;

/**
 * Handoff wake-ups on SQLite without a statement: every commit, by any
 * process, rewrites the wal-index header in the -shm (its change counter
 * and frame count). One 96-byte read of it through the guard's descriptor
 * every `pollMs` says whether anything was committed since the last look;
 * only then is the watcher woken to run its query. A gateway serving 200
 * profiles ran 800 handoff queries a second while idle (one per profile
 * every gateway.handoffPollMs), which also kept every reader connection
 * awake (idle-readers.ts). While the header reads, the watch is live (the
 * watcher's own poll slows to HANDOFF_FALLBACK_POLL_MS); when it cannot
 * (no WAL, the store parked or closed), it is not, and the watcher polls
 * as before.
 */
export function watchCommits(
  guard: () => FileGuard | undefined,
  pollMs: number,
  wakes: HandoffWakes,
): HandoffWatch {
  const buffer = Buffer.alloc(HEADER_BYTES);
  let last: Buffer | undefined;
  const read = (): Buffer | undefined => {
    const g = guard();
    if (!g?.walMode) return undefined;
    try {
      return readSync(g.shmFd, buffer, 0, HEADER_BYTES, 0) === HEADER_BYTES
        ? Buffer.from(buffer)
        : undefined;
    } catch {
      return undefined;
    }
  };
  const look = () => {
    const now = read();
    if ((now === undefined) !== (last === undefined)) wakes.live(now !== undefined);
    else if (now && last && !now.equals(last)) wakes.wake();
    last = now;
  };
  last = read();
  if (last) wakes.live(true);
  const timer = setInterval(look, pollMs);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
}

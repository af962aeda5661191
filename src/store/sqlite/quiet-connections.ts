import type { ConnectionRole } from "../types.js";
import type { Connection } from "./connection.js";

/**
 * How often quiet connections are looked for: one that served nothing for
 * a whole tick (30–60 s of quiet) rests. Long enough that a store in use,
 * even a turn a minute apart, keeps its cache warm between calls.
 */
export const REST_TICK_MS = 30_000;

/**
 * Rests (Connection.rest(): its page cache given back) every connection of
 * this process's stores that served no statement since the last tick
 * (probes aside: Connection.probeStmt() reads at rest), so a
 * process holding many quiet stores (a gateway serving 200 profiles) does
 * not keep a page cache per store that nothing reads. A connection used
 * again takes its cache back at that use. The timer is unref'd and runs
 * only while a store is open; a rest that fails leaves the connection as
 * it was (resting only saves memory).
 */
export class QuietConnections {
  private readonly seen = new WeakMap<Connection, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly connections: () => Iterable<Connection>) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), REST_TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One tick: rest the connections whose use count has not moved since the last. */
  sweep(): void {
    for (const conn of this.connections()) {
      if (conn.resting) continue;
      const uses = conn.uses - conn.probes; // a probe is not use: it reads at rest
      if (this.seen.get(conn) !== uses) {
        this.seen.set(conn, uses);
        continue;
      }
      restQuietly(conn);
    }
  }
}

/** conn.rest(), or nothing when it fails: resting only saves memory. */
export function restQuietly(conn: Connection | undefined): void {
  try {
    conn?.rest();
  } catch {
    // Stays awake.
  }
}

/** What holds a database's connections in this process (a registry entry). */
interface Holder {
  connection(role: ConnectionRole): Connection | undefined;
}

const held = new Set<Holder>();
const processWide = new QuietConnections(function* () {
  for (const holder of held)
    for (const role of ["writer", "reader"] as const) {
      const conn = holder.connection(role);
      if (conn) yield conn;
    }
});

/** Sweep `holder`'s connections with the process's others (ticking while any is watched). */
export function watchQuiet(holder: Holder): void {
  held.add(holder);
  processWide.start();
}

/** One tick of the process's sweep, now (what its timer runs every REST_TICK_MS). */
export function sweepQuiet(): void {
  processWide.sweep();
}

export function unwatchQuiet(holder: Holder): void {
  held.delete(holder);
  if (held.size === 0) processWide.stop();
}

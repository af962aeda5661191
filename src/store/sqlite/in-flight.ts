import type { Door } from "../coded-errors.js";
import type { DatabaseEntry } from "./registry.js";

/**
 * The calls of one store in flight, so close() can wait for the calls
 * issued before it (their writes commit, or fail as they would have) and
 * refuse the ones issued after it.
 */
export class InFlight {
  private count = 0;
  private stopped = false;
  private idle: (() => void)[] = [];

  /** The store's door: the process-wide maintenance door (M5), counted here too. */
  door(entry: DatabaseEntry, maxParkMs: () => number, closedError: () => Error): Door {
    return {
      enter: () => {
        if (this.stopped) throw closedError();
        this.count++;
        let waiting: Promise<void> | undefined;
        try {
          waiting = entry.enter(maxParkMs());
        } catch (err) {
          this.done();
          throw err;
        }
        // A call that gave up at a parked door never entered: it does not leave.
        return waiting?.catch((err: unknown) => {
          this.done();
          throw err;
        });
      },
      leave: () => {
        entry.leave();
        this.done();
      },
    };
  }

  /** Refuse new calls; resolves once every call in flight has left. */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private done(): void {
    if (--this.count > 0) return;
    for (const wake of this.idle.splice(0)) wake();
  }
}

/** The maintenance door alone, not counted for close() (export generators). */
export function uncountedDoor(entry: DatabaseEntry, maxParkMs: number): Door {
  return { enter: () => entry.enter(maxParkMs), leave: () => entry.leave() };
}

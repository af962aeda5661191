import { HearthError } from "../../errors.js";

/**
 * The door every store call of a process passes on one database, for
 * maintenance windows (M5): calls in flight are counted, and while the
 * door is shut new calls wait for it to open again (or give up after
 * maintenance.maxParkMs). Owned by the DatabaseEntry (registry.ts).
 */
export class ParkDoor {
  private inFlight = 0;
  private drainWaiters: (() => void)[] = [];
  private parked: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly path: () => string) {}

  get isShut(): boolean {
    return this.parked !== undefined;
  }

  /**
   * Returns undefined (no wait) unless the door is shut; then a promise that
   * resolves when it opens, or rejects with HEARTH_MAINTENANCE_RUNNING after
   * `maxWaitMs`. A call that entered must leave().
   */
  enter(maxWaitMs: number): Promise<void> | undefined {
    if (!this.parked) {
      this.inFlight++;
      return undefined;
    }
    const parked = this.parked.promise;
    return new Promise<void>((resolve, reject) => {
      let gaveUp = false;
      const timer = setTimeout(() => {
        // A call that gave up is never counted in flight, even when the window ends later.
        gaveUp = true;
        reject(
          new HearthError(
            "HEARTH_MAINTENANCE_RUNNING",
            `${this.path()} is parked for maintenance; this call waited ${maxWaitMs} ms (maintenance.maxParkMs)`,
            { resource: this.path(), hint: "retry shortly; the maintenance window ends by itself" },
          ),
        );
      }, maxWaitMs);
      void parked.then(() => {
        clearTimeout(timer);
        if (gaveUp) return;
        // Parked again meanwhile? Wait for that window too.
        const again = this.enter(maxWaitMs);
        if (again) again.then(resolve, reject);
        else resolve();
      });
    });
  }

  leave(): void {
    if (--this.inFlight > 0) return;
    for (const wake of this.drainWaiters.splice(0)) wake();
  }

  /**
   * Shut the door and wait for the calls in flight to finish (up to
   * `maxWaitMs`; else it opens again and HEARTH_STORE_HELD says so). False
   * when it was already shut.
   */
  async shut(maxWaitMs: number): Promise<boolean> {
    if (this.parked) return false;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.parked = { promise, resolve };
    if (this.inFlight === 0) return true;
    const drained = await new Promise<boolean>((done) => {
      const timer = setTimeout(() => done(false), maxWaitMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        done(true);
      });
    });
    if (drained) return true;
    const running = this.inFlight;
    this.open();
    throw new HearthError(
      "HEARTH_STORE_HELD",
      `${running} call(s) on ${this.path()} were still running after ${maxWaitMs} ms`,
      { resource: this.path(), hint: "retry the maintenance when the process is less busy" },
    );
  }

  /** Let the waiting calls in. */
  open(): void {
    const parked = this.parked;
    this.parked = undefined;
    parked?.resolve();
  }
}

import { isHearthError } from "../errors.js";
import { isSqliteStore, type Store } from "../store/api.js";

export interface RecoveryLog {
  warn(event: Record<string, unknown>, message: string): void;
  error(event: Record<string, unknown>, message: string): void;
}

/** After a reopen that failed, the next try waits this long (each request would try, and log, again). */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Keeps the dashboard's read-only stores on the current files (F3), as
 * the gateway's GenerationRecovery keeps its own. A reader is never refused
 * by the generation guard (only writes are): after someone removed or
 * replaced the -wal/-shm it would serve the old generation, silently and
 * for good, and the writers the dashboard opens for its row writes share
 * that detached connection (one per process and database) and fail with
 * HEARTH_GENERATION_CHANGED. So before every request, every live-feed poll
 * and every row write, each store is asked whether its files changed
 * (store.generationChanged(): an fstat or readlink per file) and, when
 * they did, reattached once (store.reopen(), which also saves commits only
 * a removed -wal held), however many callers ask at the same time.
 * HEARTH_GENERATION_LOST (commits lost with a removed -wal) is logged as
 * an error with its copy named; the next reopen goes on without them. A
 * store parked for a maintenance window is left alone (its resume
 * reattaches it).
 */
export class ReaderRecovery {
  private readonly pending = new Map<Store, Promise<boolean>>();
  private readonly failedAt = new Map<Store, number>();

  constructor(private readonly log: () => RecoveryLog | undefined) {}

  /**
   * Reattach every store of `stores` whose files changed under this process.
   * True when one of them is not on its current files, or was not a moment
   * ago: reattached now, or the reattach waits (its old connections still
   * close, a try failed less than a second ago, commits were lost, or it is
   * parked for maintenance). A request that failed on one of them is worth
   * a retry. Each store costs an fstat or readlink per file: callers pass
   * only the stores they read.
   */
  async reattachChanged(stores: Iterable<Store>): Promise<boolean> {
    const jobs: Promise<boolean>[] = [];
    for (const store of stores) {
      if (!isSqliteStore(store)) continue;
      if (Date.now() - (this.failedAt.get(store) ?? -Infinity) < RETRY_AFTER_FAILURE_MS) {
        jobs.push(changedNow(store));
        continue;
      }
      let job = this.pending.get(store);
      if (!job) {
        job = this.reattach(store).finally(() => this.pending.delete(store));
        this.pending.set(store, job);
      }
      jobs.push(job);
    }
    return (await Promise.all(jobs)).some(Boolean);
  }

  private async reattach(store: Store): Promise<boolean> {
    // Parked for a maintenance window (M5): its connections are closed on
    // purpose, and its resume reattaches it to the files as they are then.
    // A reopen here would take them back in the middle of the window.
    if (!isSqliteStore(store)) return false;
    if (store.isParked) return true;
    const { profile } = store;
    try {
      if (!(await store.generationChanged())) return false;
      if (store.isParked) return true;
      await store.reopen();
      this.failedAt.delete(store);
      this.log()?.warn(
        { event: "store.reopened", profile },
        "the store's files changed under the dashboard; reattached to the current ones",
      );
      return true;
    } catch (err) {
      this.failedAt.set(store, Date.now());
      if (isHearthError(err, "HEARTH_GENERATION_LOST")) {
        this.log()?.error({ event: "store.generation_lost", profile, err }, err.message);
        return true;
      }
      if (
        isHearthError(err, "HEARTH_GENERATION_CHANGED") &&
        err.details?.waitingFor === "old-connections"
      ) {
        // Refused for now (a connection of this process still on the removed
        // files: src/store/sqlite/removed-index.ts): the next request tries again.
        this.log()?.warn(
          { event: "store.reopen_deferred", profile, err },
          "the store's files changed under the dashboard; reattaching waits for its old connections to close",
        );
        return true;
      }
      this.log()?.error(
        { event: "store.reopen_failed", profile, err },
        "the store's files changed under the dashboard and it could not reattach; restart it",
      );
      return true;
    }
  }
}

/** Whether the store is off its current files now (no connection: parked, or cannot tell: counted as changed). */
async function changedNow(store: Store): Promise<boolean> {
  if (!isSqliteStore(store)) return false;
  try {
    return store.isParked || (await store.generationChanged());
  } catch {
    return true;
  }
}

import { isHearthError } from "../errors.js";
import { isSqliteStore } from "../store/api.js";
import type { ProfileRuntime } from "../turn/run.js";

export interface RecoveryLog {
  warn(event: Record<string, unknown>, message: string): void;
  error(event: Record<string, unknown>, message: string): void;
}

/**
 * Keeps a long-lived process serving after a generation change (F3). When a
 * request fails with HEARTH_GENERATION_CHANGED (someone unlinked or replaced
 * the -wal/-shm under this process), the store of that profile is reattached
 * to the current files once, however many requests saw the error at the
 * same time, and the event is logged at warn. Commits that only the removed
 * -wal held are saved into the database first (store.reopen(); issue 41);
 * when they cannot be, the gateway stops and exits 78. The failed request itself
 * wrote nothing that was acknowledged (the guard refuses before BEGIN and
 * after COMMIT), so its client retries; every later request is served on
 * the new files. reopen() keeps this process's kernel locks, so the gateway
 * lock, presence and the shared gate hold throughout. A database file that
 * was itself replaced cannot be reattached: that is logged as an error and
 * requests keep failing with the code until the process restarts.
 */
export class GenerationRecovery {
  private readonly pending = new Map<ProfileRuntime, Promise<boolean>>();

  constructor(
    private readonly runtimes: Map<string, ProfileRuntime>,
    private readonly log: RecoveryLog,
    /** Commits only a removed -wal held could not be saved (HEARTH_GENERATION_LOST). */
    private readonly onLost?: (err: Error) => void,
  ) {}

  /** Reattach the store `err` is about when it is a generation change. Resolves true once it is attached to live files. */
  recover(err: unknown): Promise<boolean> {
    if (!isHearthError(err, "HEARTH_GENERATION_CHANGED")) return Promise.resolve(false);
    const runtime = [...this.runtimes.values()].find((r) => r.store.path === err.resource);
    if (!runtime) return Promise.resolve(false);
    let job = this.pending.get(runtime);
    if (!job) {
      job = this.reattach(runtime, err.message).finally(() => this.pending.delete(runtime));
      this.pending.set(runtime, job);
    }
    return job;
  }

  private async reattach(runtime: ProfileRuntime, seen: string): Promise<boolean> {
    const { store, profile } = runtime;
    if (!isSqliteStore(store)) return false;
    try {
      // A request that failed before an earlier reattach finished reports an old generation.
      if (!(await store.generationChanged())) return true;
      await store.reopen();
      this.log.warn(
        { event: "store.reopened", profile, reason: seen },
        "the store's files changed under the gateway; reattached to the current ones",
      );
      return true;
    } catch (err) {
      if (isHearthError(err, "HEARTH_GENERATION_LOST")) {
        // Commits were lost to someone else's rm: not a thing to serve on
        // quietly. The gateway stops and exits 78 (the copy is named).
        this.log.error({ event: "store.generation_lost", profile, err }, err.message);
        this.onLost?.(err);
        return false;
      }
      if (
        isHearthError(err, "HEARTH_GENERATION_CHANGED") &&
        err.details?.waitingFor === "old-connections"
      ) {
        // Refused for now (a connection of this process still on the removed
        // files: src/store/sqlite/removed-index.ts): the next request tries again.
        this.log.warn(
          { event: "store.reopen_deferred", profile, err },
          "the store's files changed under the gateway; reattaching waits for its old connections to close",
        );
        return false;
      }
      this.log.error(
        { event: "store.reopen_failed", profile, err },
        "the store's files changed under the gateway and it could not reattach; restart it",
      );
      return false;
    }
  }
}

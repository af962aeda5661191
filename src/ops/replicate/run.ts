import type { HearthConfig } from "../../config/schema.js";
import { isSqliteStore, type Store } from "../../store/api.js";
import type { ShipCounters } from "./counters.js";
import { Replicator, type ReplicatorLog } from "./replicator.js";
import { type ReplicationStatus, writeStatus } from "./status.js";
import { openTarget, targetConfig } from "./target.js";

/** The replicators of this process, by database path (parking pauses them: pauseReplication). */
const running = new Map<string, Replicator>();

export interface Replication {
  statuses(): ReplicationStatus[];
  /** What each replicator shipped since it started (volume, for the bench). */
  counters(): ShipCounters[];
  /** Ship now, on every replicator (each tick also runs on its timer). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Replicate each SQLite store of this process to `replicate.target`, when
 * one is set (docs/durability.md#continuous-replication): the gateway calls
 * this for the profiles it serves, as the process that holds their
 * writers. A bad target name is HEARTH_TARGET_UNKNOWN at start; a target
 * that fails later is lag, never an error of the writes.
 */
export async function startReplication(options: {
  config: HearthConfig;
  home: string;
  stores: Store[];
  log: ReplicatorLog;
}): Promise<Replication> {
  const { config, home } = options;
  const name = config.replicate.target;
  const mine: Replicator[] = [];
  if (name !== undefined) {
    const target = await openTarget(targetConfig(config, name), home);
    for (const store of options.stores) {
      if (!isSqliteStore(store) || store.role !== "writer") continue;
      if (config.durability.journalMode !== "wal") {
        // A read transaction in a rollback-journal mode would block the writer: nothing to ship.
        options.log.warn(
          { event: "replicate.not_wal", profile: store.profile },
          `not replicating profile ${store.profile}: durability.journalMode is ${config.durability.journalMode}, not wal`,
        );
        continue;
      }
      const r = new Replicator(store, target, config, (s) => writeStatus(home, s), options.log);
      running.set(store.path, r);
      mine.push(r);
      r.start();
    }
  }
  return {
    statuses: () => mine.map((r) => r.current),
    counters: () => mine.map((r) => ({ ...r.counters })),
    tick: async () => {
      await Promise.all(mine.map((r) => r.tick()));
    },
    stop: async () => {
      await Promise.all(mine.map((r) => r.stop()));
      for (const [path, r] of running) if (mine.includes(r)) running.delete(path);
    },
  };
}

/** Before a maintenance window parks the store at `path`: ship what is committed and let the WAL go. */
export async function pauseReplication(path: string): Promise<void> {
  await running.get(path)?.pause();
}

/** After the window: the next tick starts a new generation (the file may have been replaced). */
export function resumeReplication(path: string): void {
  running.get(path)?.resume();
}

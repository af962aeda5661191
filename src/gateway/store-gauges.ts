import { lstatSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import { Gauge, type Registry } from "prom-client";
import { backupsDir } from "../config/paths.js";
import { listBackups } from "../ops/backup-names.js";
import { readHolders } from "../process/holders.js";
import { isSqliteStore, type Store } from "../store/api.js";

/** A file's size from lstat (never a descriptor on a database file, F2); -1 when unreadable, 0 when absent. */
function sizeOf(path: string): number {
  try {
    return lstatSync(path).size;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? 0 : -1;
  }
}

/**
 * The gauges an operator alerts on, read at every scrape from the kernel
 * and the store, never echoed from configuration:
 * - hearth_store_free_bytes{profile}: free bytes on the store's filesystem (statfs; SQLite)
 * - hearth_store_database_bytes, hearth_store_wal_bytes{profile}: state.db and -wal sizes (lstat; SQLite)
 * - hearth_store_oldest_reader_age_seconds{profile}: how long the oldest other
 *   process holding the database as a reader has run (/proc/locks; 0: none; SQLite)
 * - hearth_backup_newest_age_seconds{profile}: age of the newest backup in backups/ (-1: none)
 * - hearth_job_consecutive_failures{job,profile}: refused, failed or unknown runs in a
 *   row, from the store's run records
 * (open descriptors: hearth_process_open_fds, prom-client's, from /proc/self/fd;
 * in-flight turns: hearth_turns_in_flight.) A value that cannot be read is -1.
 */
export function registerStoreGauges(
  registry: Registry,
  home: string,
  stores: () => Iterable<{ profile: string; store: Store }>,
): void {
  const sqlite = () =>
    [...stores()].flatMap(({ profile, store }) =>
      isSqliteStore(store) && !store.isClosed ? [{ profile, path: store.path }] : [],
    );
  const gauge = (
    name: string,
    help: string,
    value: (s: { profile: string; path: string }) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["profile"],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of sqlite()) this.set({ profile: s.profile }, value(s));
      },
    });
  gauge(
    "hearth_store_free_bytes",
    "Free bytes on the filesystem of the store (-1: unreadable)",
    (s) => {
      try {
        const fs = statfsSync(dirname(s.path));
        return fs.bavail * fs.bsize;
      } catch {
        return -1;
      }
    },
  );
  gauge("hearth_store_database_bytes", "Size of state.db", (s) => sizeOf(s.path));
  gauge("hearth_store_wal_bytes", "Size of state.db-wal", (s) => sizeOf(`${s.path}-wal`));
  gauge(
    "hearth_store_oldest_reader_age_seconds",
    "How long the oldest other process holding the store as a reader has run (0: none)",
    (s) => {
      try {
        const since = readHolders(s.path, { ghosts: false, fdinfo: false })
          .holders.filter((h) => h.roles.includes("reader") && h.since)
          .map((h) => h.since!.getTime());
        return since.length === 0 ? 0 : Math.max(0, (Date.now() - Math.min(...since)) / 1000);
      } catch {
        return -1;
      }
    },
  );
  new Gauge({
    name: "hearth_backup_newest_age_seconds",
    help: "Age of the newest backup of the profile in backups/ (-1: none)",
    labelNames: ["profile"],
    registers: [registry],
    collect() {
      this.reset();
      for (const { profile } of stores()) {
        let newest: number | undefined;
        try {
          newest = listBackups(backupsDir(home), profile)[0]?.mtimeMs;
        } catch {
          newest = undefined; // a backup pruned while listed: the next scrape sees the rest
        }
        this.set(
          { profile },
          newest === undefined ? -1 : Math.max(0, (Date.now() - newest) / 1000),
        );
      }
    },
  });
  new Gauge({
    name: "hearth_job_consecutive_failures",
    help: "Refused, failed or unknown runs of the job in a row, from the store's run records",
    labelNames: ["job", "profile"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { profile, store } of stores()) {
        if (store.isClosed) continue;
        try {
          for (const h of await store.runs.health())
            this.set({ job: h.job, profile }, h.consecutiveFailures);
        } catch {
          // an unreachable store leaves its jobs out of this scrape; /v1/ready says why
        }
      }
    },
  });
}

import { isHearthError } from "../errors.js";
import type { Connection } from "./connection.js";
import type { DatabaseEntry } from "./registry.js";

/**
 * The write path: the fair cross-process write lock (waited for
 * asynchronously, bounded by the patience), then one IMMEDIATE transaction.
 * A foreign writer (not hearth) holding SQLite's own lock is waited out
 * with async retries too, never with SQLite's sleeping busy handler. When
 * the derived search index turns out damaged, it is marked degraded (its
 * triggers then stand aside) and the write goes through anyway.
 */
export function writeTransaction<T>(
  entry: DatabaseEntry,
  writer: () => Connection,
  fn: (conn: Connection) => T,
  patienceMs: number,
): Promise<T> {
  const deadline = Date.now() + patienceMs;
  return entry.locks.writeLock.run(async () => {
    let degradedNow = false;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      const conn = writer();
      try {
        return conn.transaction(() => fn(conn));
      } catch (err) {
        if (isSearchIndexDamage(err) && !degradedNow) {
          degradedNow = true;
          markSearchDegraded(conn, String((err as Error).message));
          continue;
        }
        if (!isBusyAtBegin(err)) throw err;
        // Out of patience: name whoever holds the store (a foreign writer holds SQLite's lock).
        if (Date.now() >= deadline) throw entry.locks.busyError(err);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, deadline - Date.now())));
      writer().guard?.check();
    }
  }, patienceMs);
}

function isSearchIndexDamage(err: unknown): boolean {
  return (
    isHearthError(err) && (err.sqliteCode === "SQLITE_CORRUPT_VTAB" || /\bfts5\b/.test(err.message))
  );
}

function markSearchDegraded(conn: Connection, reason: string): void {
  conn.transaction(() =>
    conn
      .stmt(
        `INSERT INTO meta (key, value, updated_at) VALUES ('fts_degraded', ?, ?)
         ON CONFLICT (key) DO NOTHING`,
      )
      .run(reason.slice(0, 500), Date.now()),
  );
}

function isBusyAtBegin(err: unknown): boolean {
  return isHearthError(err, "HEARTH_BUSY") && err.details?.phase === "begin";
}

import { isHearthError } from "../../errors.js";
import { abortedError } from "../api.js";
import type { Connection } from "./connection.js";
import { mergeSearchIndex, totalChanges } from "./fts-merge.js";
import type { DatabaseEntry } from "./registry.js";
import type { CommitHow } from "./wal-sync/sync.js";

/**
 * The write path: the fair cross-process write lock (waited for
 * asynchronously, bounded by the patience), then one IMMEDIATE transaction.
 * A foreign writer (not hearth) holding SQLite's own lock is waited out
 * with async retries too, never with SQLite's sleeping busy handler. When
 * the derived search index turns out damaged, it is marked degraded (its
 * triggers then stand aside) and the write goes through anyway. The
 * promise resolves once the commit is durable: with a WalSync, after its
 * fsync on the libuv pool (src/store/sqlite/wal-sync/sync.ts).
 */
export function writeTransaction<T>(
  entry: DatabaseEntry,
  writer: () => Connection,
  fn: (conn: Connection) => T,
  patienceMs: number,
  signal?: AbortSignal,
  options: WriteOptions = {},
): Promise<T> {
  const counted = options.searchIndex !== false;
  if (signal?.aborted) return Promise.reject(abortedError(signal));
  const deadline = Date.now() + patienceMs;
  // Once a transaction has begun, an abort no longer ends the call: the
  // transaction runs synchronously to its commit or rollback, and the
  // caller learns which (never HEARTH_ABORTED for a write that happened).
  let begun = false;
  let committed: { how: CommitHow; heldMs: number; commitMs: number } | undefined;
  let degradedNow = false;
  /** One try at the transaction: its value, or RETRY when a foreign writer held SQLite's lock at BEGIN. */
  const attempt = (): T | typeof RETRY => {
    if (signal?.aborted) throw abortedError(signal);
    const conn = writer();
    try {
      begun = true;
      const walSync = conn.offLoop ? entry.walSync : undefined;
      const how = walSync?.commitMode(entry.locks.writeLock.queued > 0, options.grouped);
      const started = performance.now();
      const result = conn.transaction(() => {
        const prepare = (sql: string) => conn.stmt(sql);
        // Rows changed owe merge work on the search index; a write that touches none of its tables owes none.
        const before = counted ? totalChanges(prepare) : 0;
        const value = fn(conn);
        if (counted) entry.searchMerges.add(totalChanges(prepare) - before);
        // With a WalSync its checkpoint thread merges (unless the thread fails, or this commit checkpoints inline); otherwise here, as FTS5 would have.
        const threadMerges = walSync?.threadMerges && how?.mode !== "inline";
        const pages = threadMerges ? 0 : entry.searchMerges.take();
        if (pages > 0) entry.searchMerges.record(mergeSearchIndex(prepare, pages));
        return value;
      }, offLoopMode(how));
      if (how) {
        committed = { how, heldMs: performance.now() - started, commitMs: conn.lastCommitMs };
      }
      return result;
    } catch (err) {
      if (isSearchIndexDamage(err) && !degradedNow) {
        degradedNow = true;
        markSearchDegraded(conn, String((err as Error).message));
        return attempt();
      }
      if (!isBusyAtBegin(err)) throw err;
      // Out of patience: name whoever holds the store (a foreign writer holds SQLite's lock).
      if (Date.now() >= deadline) throw entry.locks.busyError(err);
    }
    begun = false;
    return RETRY;
  };
  // A foreign writer holds SQLite's lock: wait it out with timers, never SQLite's sleeping busy handler.
  const retrying = async (): Promise<T> => {
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, deadline - Date.now())));
      writer().guard?.check();
      const value = attempt();
      if (value !== RETRY) return value;
    }
  };
  // The common case runs to its commit inside run(), synchronously (FairWriteLock.run).
  let done: { value: T } | undefined;
  const run = entry.locks.writeLock.run(() => {
    const value = attempt();
    if (value === RETRY) return retrying();
    done = { value };
    return value;
  }, patienceMs);
  // Committed: on the WalSync's fsync (and checkpoint) before it is acknowledged.
  // (Assigned inside run()'s callback: TypeScript cannot see that it may be set here.)
  const finished = done as { value: T } | undefined;
  const durable = finished
    ? (afterCommit(entry, committed, finished.value) ?? run)
    : run.then((value) => afterCommit(entry, committed, value) ?? value);
  if (!signal) return durable;
  // An abort while waiting answers the caller now; the queued turn at the
  // lock still comes, sees the signal and writes nothing.
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (!begun) reject(abortedError(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    durable.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** attempt() found SQLite's write lock held by another program: try again after a wait. */
const RETRY = Symbol("retry");

/**
 * After a commit (and after the write lock was let go): the WalSync's part
 * (src/store/sqlite/wal-sync/sync.ts), resolving to `value` once the write
 * may be acknowledged; undefined when there is nothing to wait for.
 */
function afterCommit<T>(
  entry: DatabaseEntry,
  committed: { how: CommitHow; heldMs: number; commitMs: number } | undefined,
  value: T,
): Promise<T> | undefined {
  if (!committed) return undefined;
  const { how, heldMs, commitMs } = committed;
  let synced: Promise<void> | undefined;
  try {
    synced = entry.walSync?.afterCommit(how, heldMs, commitMs);
  } catch (err) {
    return Promise.reject(err);
  }
  return synced?.then(() => value);
}

/** How a write-path call writes. */
export interface WriteOptions {
  /**
   * false: the transaction changes no table the search index covers
   * (messages and their triggers), so its changed rows owe no merge work
   * and are not counted (two total_changes() statements saved).
   */
  searchIndex?: false;
  /** A group commit of this many writes (appendMany): WalSync.commitMode. */
  grouped?: number;
}

/** The commit's OffLoopMode for Connection.transaction: none (SQLite's own behaviour) when inline. */
function offLoopMode(how: CommitHow | undefined) {
  return how?.mode === "inline" ? undefined : how?.mode;
}

/** HEARTH_ABORTED: the caller's signal ended the call before it wrote anything. */

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

/**
 * The search index's merges, off the writer's event loop (schema version 9).
 *
 * FTS5 writes each transaction's new entries as a small segment, and merges
 * segments as later writes come. Its automatic merge does that work inside
 * a commit: every 64 leaf pages written, 64 pages per level of the index,
 * ~1,000 pages on a store of a million messages, 30 to 170 ms during which
 * the writer's event loop is frozen (docs/benchmarks-history.md, "The
 * search index merged off the writer's loop"). Merging a few pages inside
 * every write transaction was tried: on a freshly built store each step
 * of 20 pages took 20 to 120 ms, most of it spent picking up the merge of
 * large segments where the last step left it.
 *
 * So version 9 turns the automatic merge off, and hearth does the same work
 * in chunks of MERGE_CHUNK_PAGES: each write transaction of the write path
 * adds MERGE_PAGES_PER_CHANGE pages per row it changed to a debt, and a
 * chunk is merged once the debt reaches one. With a WalSync, the checkpoint
 * thread merges it, under the write lock, before its checkpoint
 * (src/store/sqlite/wal-sync); without one, the writer merges it inside the write
 * transaction that reached the chunk, as FTS5 would have. FTS5's crisis
 * merge (16 segments on one level) stays as a last resort.
 */

/** Pages of merge work owed per row a write transaction changed (FTS5 does about one per level per leaf page). */
const MERGE_PAGES_PER_CHANGE = 5;
/** Pages merged at once: large enough that resuming a merge costs little beside it. */
const MERGE_CHUNK_PAGES = 1000;
/** The debt never grows past this (a bulk delete changes thousands of rows). */
const MAX_DEBT_PAGES = 4 * MERGE_CHUNK_PAGES;

const DEGRADED_SQL = "SELECT value FROM meta WHERE key = 'fts_degraded'";
const MERGE_SQL = "INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ?)";
const TOTAL_CHANGES_SQL = "SELECT total_changes() AS n";

/** Prepared statements of one connection: a Connection's stmt, or a better-sqlite3 Database's prepare. */
export type Prepare = (sql: string) => { get(): unknown; run(...params: unknown[]): unknown };

import type { SearchMergeStats } from "../types.js";

/** The merge work a database's writers owe (one per database in a process), and what was merged. */
export class MergeDebt {
  private pages = 0;
  private readonly counts = { asked: 0, merged: 0, failed: 0, lastError: null as string | null };

  /** After a chunk was merged: whether it merged anything, or why it failed. */
  record(outcome: boolean | string): void {
    this.counts.asked++;
    if (outcome === true) this.counts.merged++;
    else if (typeof outcome === "string") {
      this.counts.failed++;
      this.counts.lastError = outcome;
    }
  }

  stats(by: SearchMergeStats["by"]): SearchMergeStats {
    return { by, ...this.counts };
  }

  /** After a write transaction that changed `changes` rows. */
  add(changes: number): void {
    if (changes > 0)
      this.pages = Math.min(MAX_DEBT_PAGES, this.pages + changes * MERGE_PAGES_PER_CHANGE);
  }

  /** Pages taken for a merge that never ran (its checkpoint job failed): owed again. */
  giveBack(pages: number): void {
    if (pages > 0) this.pages = Math.min(MAX_DEBT_PAGES, this.pages + pages);
  }

  /**
   * Pages to merge now: whole chunks owed, at most `chunks` of them (a
   * merger that fell behind catches up), else 0.
   */
  take(chunks = 1): number {
    const pages = Math.min(chunks, Math.floor(this.pages / MERGE_CHUNK_PAGES)) * MERGE_CHUNK_PAGES;
    this.pages -= pages;
    return pages;
  }
}

/**
 * Why the search index is marked degraded (meta 'fts_degraded': found
 * damaged, its triggers stand aside until a repair rebuilds it), or null
 * when it is in service.
 */
export function searchDegradedReason(prepare: Prepare): string | null {
  const row = prepare(DEGRADED_SQL).get() as { value: string } | undefined;
  return row ? row.value : null;
}

/** Rows changed on this connection since it opened, triggers' and FTS5's own rows included. */
export function totalChanges(prepare: Prepare): number {
  return (prepare(TOTAL_CHANGES_SQL).get() as { n: number }).n;
}

/**
 * Merge up to `pages` pages of the search index, on a connection that may
 * write now. A degraded index (meta 'fts_degraded') is left alone: repair
 * rebuilds it, and merging it would only fail. Returns false when nothing
 * was merged.
 */
export function mergeSearchIndex(prepare: Prepare, pages: number): boolean {
  if (pages <= 0) return false;
  if (searchDegradedReason(prepare) !== null) return false;
  const before = totalChanges(prepare);
  prepare(MERGE_SQL).run(pages);
  // FTS5 counts a change for the command itself; more means it merged.
  return totalChanges(prepare) - before > 1;
}

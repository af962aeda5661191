import { statSync } from "node:fs";
import type Database from "better-sqlite3";

/** SQLite's answer to wal_checkpoint: busy (1 when it stopped short), frames in the WAL, frames checkpointed (-1 when not in WAL mode). */
export interface WalCheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * `PRAGMA wal_checkpoint(mode)` on a better-sqlite3 connection, its one row
 * read; a missing row reads as busy with no WAL. Shared by the checkpoint
 * thread, the writer's own fallback checkpoint and the structural gate.
 */
export function walCheckpoint(
  db: Database.Database,
  mode: "PASSIVE" | "RESTART" | "TRUNCATE",
): WalCheckpointRow {
  const [row] = db.pragma(`wal_checkpoint(${mode})`) as WalCheckpointRow[];
  return row ?? { busy: 1, log: -1, checkpointed: -1 };
}

/**
 * PASSIVE, or TRUNCATE when the WAL file of the database at `path` has grown
 * past `truncateAbove` bytes (-1: never). SQLite would cut such a WAL back in
 * the first commit that starts it over, on the writer's loop; hearth's
 * off-loop commits leave that to the checkpoint that called this (the
 * thread's, or the writer's own fallback). Run TRUNCATE with busy_timeout 0:
 * a reader still on the WAL then makes it stop where PASSIVE would.
 */
export function checkpointModeFor(path: string, truncateAbove: number): "PASSIVE" | "TRUNCATE" {
  if (truncateAbove < 0) return "PASSIVE";
  const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
  return wal && wal.size > truncateAbove ? "TRUNCATE" : "PASSIVE";
}

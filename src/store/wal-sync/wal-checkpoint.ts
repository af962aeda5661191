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
  mode: "PASSIVE" | "TRUNCATE",
): WalCheckpointRow {
  const [row] = db.pragma(`wal_checkpoint(${mode})`) as WalCheckpointRow[];
  return row ?? { busy: 1, log: -1, checkpointed: -1 };
}

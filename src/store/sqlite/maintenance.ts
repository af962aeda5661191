import { quickCheckInMemory, setJournalMode, verifyCopy } from "./file.js";
import { type Health, type RepairStrategy, repairSnapshot, type SalvageCounts } from "./repair.js";
import { type ContentReport, inspectContent } from "./snapshot.js";

export type { ContentReport, Health, RepairStrategy, SalvageCounts };

/**
 * What maintenance (`ops/`) needs from a storage backend, as operations on
 * database files, never SQL: diagnosis, verification of copies, the
 * journal mode of a file nobody holds yet, repair strategies on a snapshot.
 * `ops/` reaches the database only through this and `Store`; a second
 * backend (PostgreSQL) implements the same operations its own way.
 */
export interface MaintenanceBackend {
  /** Read-only diagnosis of a store's content (M1): creates, changes and deletes no file. */
  inspectContent(
    path: string,
    walHeader: boolean,
    options: { synchronous: string; staleBefore: number },
  ): ContentReport;
  /** Throws HEARTH_BACKUP_INVALID unless the copy at `path` is an intact hearth store. */
  verifyCopy(path: string): void;
  /** quick_check problems of a WAL-mode copy, read without creating sidecars. */
  quickCheckCopy(path: string): string[];
  /** Give a file no other process knows yet the journal mode and synchronous level; remove its sidecars. */
  setJournalMode(path: string, mode: string, synchronous: string): void;
  /** Run the repair strategies on a snapshot; the returned file is the one to promote. */
  repairSnapshot(
    snapshot: string,
    salvageTarget: string,
    dryRun: boolean,
  ): { strategy: RepairStrategy; file: string; before: Health; salvaged?: SalvageCounts };
}

/** The embedded default: SQLite files through better-sqlite3. */
export const sqliteMaintenance: MaintenanceBackend = {
  inspectContent,
  verifyCopy,
  quickCheckCopy: quickCheckInMemory,
  setJournalMode,
  repairSnapshot,
};

import { chmodSync, copyFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../config/load.js";
import { databasePath, profileDir, resolveLocation } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import {
  assertOurs,
  assertSafeFile,
  assertSafeSidecars,
  inodeKey,
  lstatOrNull,
  readHeader,
  SIDECAR_SUFFIXES,
} from "../files/inspect.js";
import { InodeLocks } from "../process/inode-locks.js";
import { claimStructural } from "../process/structural.js";
import type { OnProgress } from "../store/progress.js";
import { sqliteMaintenance } from "../store/sqlite/maintenance.js";
import { LATEST_SCHEMA_VERSION } from "../store/sqlite/migrations.js";
import { takeForensicCopy } from "./forensic.js";
import { phases } from "./phases.js";
import { fsyncFile } from "./publish.js";
import { assertSpaceFor } from "./space.js";

const RESTORE_PHASES = ["verify", "forensic copy", "copy", "publish"] as const;

export interface RestoreResult {
  path: string;
  from: string;
  dryRun: boolean;
  /** Where the replaced store's forensic copy went (null when there was no store). */
  forensicCopy: string | null;
}

/**
 * Replace a profile's store with a backup (M3). Offline only: refuses
 * (HEARTH_STORE_HELD, exit 3) while any process holds the store, and holds
 * the structural gate so that no writer can attach meanwhile. The backup is
 * verified first; a forensic copy of the store it replaces (database and
 * every sidecar) is taken before anything changes; the backup is copied
 * next to the store, fsync'd, the old sidecars are removed (a stale WAL must
 * never be replayed into the restored file) and the copy is renamed over
 * the database in one step; the result is verified again.
 */
export async function restore(options: {
  home?: string | undefined;
  profile?: string | undefined;
  from: string;
  dryRun?: boolean;
  onProgress?: OnProgress;
}): Promise<RestoreResult> {
  const progress = phases("restore", RESTORE_PHASES, options.onProgress);
  const { home, profile } = resolveLocation(options);
  const config = loadConfig({ home });
  const path = databasePath(home, profile);
  progress.start("verify");
  verifyBackupFile(options.from);

  const current = lstatOrNull(path);
  if (current) assertSafeFile(path, current);
  assertSafeSidecars(path);
  let locks: InodeLocks | undefined;
  if (current) {
    locks = new InodeLocks(path, inodeKey(current));
    try {
      await locks.enterWriter(0);
      claimStructural(locks, "restore", { exclusiveFiles: true });
    } catch (err) {
      locks.leaveWriter();
      locks.close();
      throw err;
    }
  }
  try {
    const size = statSync(options.from).size;
    // A dry run creates nothing: the space is read where the profile's
    // directory is, or would be made.
    assertSpaceFor(dirname(path), size, `restore ${options.from}`);
    if (options.dryRun) return { path, from: options.from, dryRun: true, forensicCopy: null };
    ensurePrivateDir(profileDir(home, profile));
    progress.start("forensic copy");
    const forensic = current
      ? takeForensicCopy(home, profile, path, {
          keep: config.backup.forensicKeep,
          reason: `restore from ${options.from}`,
        })
      : undefined;
    const staging = join(dirname(path), `.restore-${process.pid}-${Date.now()}.tmp`);
    try {
      progress.start("copy");
      copyFileSync(options.from, staging);
      chmodSync(staging, 0o600);
      // The copy is verified while it is still a rollback-journal file (reading it creates nothing).
      if (!readHeader(staging).wal) sqliteMaintenance.verifyCopy(staging);
      progress.start("publish");
      // The restored file carries the configured journal mode (a backup is a rollback-journal file).
      sqliteMaintenance.setJournalMode(
        staging,
        config.durability.journalMode,
        config.durability.synchronous,
      );
      fsyncFile(staging);
      for (const suffix of SIDECAR_SUFFIXES) rmSync(path + suffix, { force: true });
      renameSync(staging, path);
      fsyncFile(dirname(path));
    } catch (err) {
      rmSync(staging, { force: true });
      throw new HearthError(
        "HEARTH_RESTORE_FAILED",
        `restore of ${path} failed: ${(err as Error).message}`,
        {
          resource: path,
          cause: err,
          hint: forensic ? `the replaced store is in ${forensic.dir}` : "nothing was replaced",
        },
      );
    }
    const restored = readHeader(path);
    assertOurs(path, restored);
    progress.done();
    return { path, from: options.from, dryRun: false, forensicCopy: forensic?.dir ?? null };
  } finally {
    if (locks) {
      locks.endStructural();
      locks.leaveWriter();
      locks.close();
    }
  }
}

/** The file to restore from must be a hearth store this build can open, intact. */
function verifyBackupFile(from: string): void {
  const stats = lstatOrNull(from);
  if (!stats?.isFile()) {
    throw new HearthError("HEARTH_BACKUP_INVALID", `${from} is not a regular file`, {
      resource: from,
      hint: "ls $HEARTH_HOME/backups   # backups are <profile>-<stamp>.db",
    });
  }
  let header: ReturnType<typeof readHeader>;
  try {
    header = readHeader(from);
    assertOurs(from, header);
  } catch (err) {
    throw new HearthError("HEARTH_BACKUP_INVALID", (err as Error).message, {
      resource: from,
      cause: err,
    });
  }
  if (header.empty || header.userVersion > LATEST_SCHEMA_VERSION) {
    throw new HearthError(
      "HEARTH_BACKUP_INVALID",
      `${from} ${header.empty ? "is empty" : `has schema ${header.userVersion}, newer than this build`}`,
      { resource: from },
    );
  }
  if (header.wal) {
    // A connection would create sidecars next to it: check an in-memory copy instead.
    if (sqliteMaintenance.quickCheckCopy(from).length > 0)
      throw new HearthError("HEARTH_BACKUP_INVALID", `${from} failed quick_check`, {
        resource: from,
      });
  } else sqliteMaintenance.verifyCopy(from);
}

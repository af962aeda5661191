import { chmodSync, copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { databasePath, profileDir, resolveLocation } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { failpoint } from "../failpoints.js";
import {
  assertSafeFile,
  assertSafeSidecars,
  assertSingleName,
  inodeKey,
  lstatOrNull,
  SIDECAR_SUFFIXES,
} from "../files/inspect.js";
import { InodeLocks } from "../process/inode-locks.js";
import { claimStructural } from "../process/structural.js";
import type { OnProgress } from "../store/progress.js";
import {
  type Health,
  type RepairStrategy,
  type SalvageCounts,
  sqliteMaintenance,
} from "../store/sqlite/maintenance.js";
import { refuseOnPostgres } from "./backend.js";
import { takeForensicCopy } from "./forensic.js";
import { phases } from "./phases.js";
import { fsyncFile } from "./publish.js";
import { fingerprintFile, MAX_ATTEMPTS, readLedger, recordAttempt } from "./repair/ledger.js";
import { assertSpaceFor } from "./space.js";

const REPAIR_PHASES = ["forensic copy", "snapshot", "repair", "promote"] as const;

export interface RepairResult {
  path: string;
  /** What was wrong before. */
  before: Health;
  /** "none" when the store was healthy. */
  strategy: RepairStrategy;
  dryRun: boolean;
  forensicCopy: string | null;
  salvaged?: SalvageCounts;
}

/**
 * Repair a damaged store (M2, M3). Offline: refuses (exit 3) while any
 * process holds it. A forensic copy of the database and every sidecar is
 * taken before anything else; no copy, no repair. The work happens on a
 * snapshot in a staging directory: strategies from least to most
 * destructive (search-index rebuild, REINDEX, salvage of readable rows into
 * a fresh store), each verified; the repaired file gets the configured
 * journal mode and replaces the original in one rename. A failed repair
 * leaves the original exactly as it was. Every attempt is written to a
 * ledger keyed on a fingerprint of the damage; after 3 failures on one
 * fingerprint repair stops and says what to do instead.
 */
/** The way out of a repair asked of a PostgreSQL profile. */
const REPAIR_ON_POSTGRES =
  "there is no state.db to repair: see what is wrong with hearth doctor, restore a PostgreSQL backup with hearth restore --from <backup>.pgdump, or use PostgreSQL's own tools (REINDEX, pg_amcheck)";

export async function repair(options: {
  home?: string | undefined;
  profile?: string | undefined;
  dryRun?: boolean;
  onProgress?: OnProgress;
}): Promise<RepairResult> {
  await refuseOnPostgres(options, "hearth sessions repair", REPAIR_ON_POSTGRES);
  const progress = phases("repair", REPAIR_PHASES, options.onProgress);
  const { home, profile } = resolveLocation(options);
  const config = loadConfig({ home });
  const path = databasePath(home, profile);
  const dir = profileDir(home, profile);
  const stats = lstatOrNull(path);
  if (!stats) {
    throw new HearthError("HEARTH_STORE_NOT_FOUND", `no store at ${path}`, { resource: path });
  }
  assertSafeFile(path, stats);
  assertSingleName(path, stats);
  assertSafeSidecars(path);

  const locks = new InodeLocks(path, inodeKey(stats));
  try {
    await locks.enterWriter(0);
    claimStructural(locks, "repair", { exclusiveFiles: true });
  } catch (err) {
    locks.leaveWriter();
    locks.close();
    throw err;
  }
  const work = join(dir, `.repair-${process.pid}-${Date.now()}`);
  try {
    const fingerprint = fingerprintFile(path);
    const previous = readLedger(dir)[fingerprint];
    if (previous && !previous.repaired && previous.failures >= MAX_ATTEMPTS) {
      throw new HearthError(
        "HEARTH_REPAIR_GAVE_UP",
        `repair already failed ${previous.failures} times on this exact damage of ${path} (last: ${previous.lastError}); it will not try again`,
        {
          resource: path,
          hint: "restore a backup (hearth restore <file> --yes; ls $HEARTH_HOME/backups), or export what is readable (hearth sessions export) and start a new store",
        },
      );
    }
    const size = [path, ...SIDECAR_SUFFIXES.map((s) => path + s)].reduce(
      (sum, p) => sum + (lstatOrNull(p)?.size ?? 0),
      0,
    );
    // The snapshot and the repaired copy sit next to the store: room for both.
    assertSpaceFor(dir, size * 2, `repair ${path}`);
    progress.start("forensic copy");
    const forensic = options.dryRun
      ? null
      : takeForensicCopy(home, profile, path, {
          keep: config.backup.forensicKeep,
          reason: "before repair",
        });

    progress.start("snapshot");
    mkdirSync(work, { mode: 0o700 });
    const snapshot = join(work, "state.db");
    copyFileSync(path, snapshot);
    for (const suffix of ["-wal", "-journal"]) {
      if (lstatOrNull(path + suffix)?.isFile()) copyFileSync(path + suffix, snapshot + suffix);
    }
    let outcome: {
      strategy: RepairResult["strategy"];
      file: string;
      before: Health;
      salvaged?: RepairResult["salvaged"];
    };
    progress.start("repair");
    try {
      outcome = sqliteMaintenance.repairSnapshot(
        snapshot,
        join(work, "salvaged.db"),
        options.dryRun === true,
      );
    } catch (err) {
      if (!options.dryRun) recordAttempt(dir, fingerprint, (err as Error).message);
      throw err;
    }
    const result: RepairResult = {
      path,
      before: outcome.before,
      strategy: outcome.strategy,
      dryRun: options.dryRun === true,
      forensicCopy: forensic?.dir ?? null,
      ...(outcome.salvaged ? { salvaged: outcome.salvaged } : {}),
    };
    if (options.dryRun || outcome.strategy === "none") {
      progress.done();
      return result;
    }
    progress.start("promote");
    promote(outcome.file, path, config.durability.journalMode, config.durability.synchronous);
    recordAttempt(dir, fingerprint, null);
    progress.done();
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
    locks.endStructural();
    locks.leaveWriter();
    locks.close();
  }
}

/** Configured journal mode on the repaired copy, old sidecars removed, one rename over the original. */
function promote(file: string, path: string, journalMode: string, synchronous: string): void {
  sqliteMaintenance.setJournalMode(file, journalMode, synchronous);
  chmodSync(file, 0o600);
  fsyncFile(file);
  for (const suffix of SIDECAR_SUFFIXES) rmSync(path + suffix, { force: true });
  failpoint("repair.mid-promote");
  renameSync(file, path);
  fsyncFile(join(path, ".."));
}

import { chmodSync, copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { loadConfig } from "../config/load.js";
import { databasePath, profileDir, resolveLocation } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { failpoint } from "../failpoints.js";
import {
  assertSafeFile,
  assertSafeSidecars,
  lstatOrNull,
  SIDECAR_SUFFIXES,
} from "../files/inspect.js";
import { InodeLocks } from "../process/inode-locks.js";
import { claimStructural } from "../process/structural.js";
import { fsyncFile } from "./backup.js";
import { takeForensicCopy } from "./forensic.js";
import { fingerprintFile, MAX_ATTEMPTS, readLedger, recordAttempt } from "./repair/ledger.js";
import {
  checkHealth,
  type Health,
  healthy,
  rebuildFts,
  reindex,
  salvage,
} from "./repair/strategies.js";
import { assertSpaceFor } from "./space.js";
import { setJournalMode } from "./sqlite-file.js";

export interface RepairResult {
  path: string;
  /** What was wrong before. */
  before: Health;
  /** "none" when the store was healthy. */
  strategy: "none" | "fts-rebuild" | "reindex" | "salvage";
  dryRun: boolean;
  forensicCopy: string | null;
  salvaged?: { sessions: number; messages: number; meta: number };
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
export async function repair(options: {
  home?: string | undefined;
  profile?: string | undefined;
  dryRun?: boolean;
}): Promise<RepairResult> {
  const { home, profile } = resolveLocation(options);
  const config = loadConfig({ home });
  const path = databasePath(home, profile);
  const dir = profileDir(home, profile);
  const stats = lstatOrNull(path);
  if (!stats) {
    throw new HearthError("HEARTH_STORE_NOT_FOUND", `no store at ${path}`, { resource: path });
  }
  assertSafeFile(path, stats);
  assertSafeSidecars(path);

  const locks = new InodeLocks(path, `${stats.dev}:${stats.ino}`);
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
    const forensic = options.dryRun
      ? null
      : takeForensicCopy(home, profile, path, {
          keep: config.backup.forensicKeep,
          reason: "before repair",
        });

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
    try {
      outcome = runStrategies(snapshot, join(work, "salvaged.db"), options.dryRun === true);
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
    if (options.dryRun || outcome.strategy === "none") return result;
    promote(outcome.file, path, config.durability.journalMode, config.durability.synchronous);
    recordAttempt(dir, fingerprint, null);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
    locks.endStructural();
    locks.leaveWriter();
    locks.close();
  }
}

/** Least destructive first; each result is checked before it is accepted. */
function runStrategies(
  snapshot: string,
  salvageTarget: string,
  dryRun: boolean,
): {
  strategy: RepairResult["strategy"];
  file: string;
  before: Health;
  salvaged?: RepairResult["salvaged"];
} {
  let db: Database.Database;
  try {
    db = new Database(snapshot, { fileMustExist: true });
  } catch (err) {
    throw failed(`the snapshot cannot be opened: ${(err as Error).message}`);
  }
  try {
    const before = checkHealth(db);
    if (healthy(before)) return { strategy: "none", file: snapshot, before };
    if (dryRun)
      return {
        strategy: before.canonical.length > 0 ? "reindex" : "fts-rebuild",
        file: snapshot,
        before,
      };
    if (before.canonical.length === 0) {
      // Only the derived index is damaged: rebuild it alone, never "fix" canonical rows this way.
      if (tryStep(() => rebuildFts(db)) && healthy(checkHealth(db)))
        return { strategy: "fts-rebuild", file: snapshot, before };
    } else if (tryStep(() => reindex(db)) && healthy(checkHealth(db))) {
      return { strategy: "reindex", file: snapshot, before };
    }
    const salvaged = salvage(db, salvageTarget);
    const check = new Database(salvageTarget, { fileMustExist: true });
    try {
      const after = checkHealth(check);
      if (!healthy(after))
        throw failed(
          `the salvaged copy is not healthy: ${[...after.canonical, after.fts].join("; ")}`,
        );
    } finally {
      check.close();
    }
    return { strategy: "salvage", file: salvageTarget, before, salvaged };
  } catch (err) {
    if (err instanceof HearthError) throw err;
    throw failed((err as Error).message);
  } finally {
    db.close();
  }
}

function tryStep(step: () => void): boolean {
  try {
    step();
    return true;
  } catch {
    return false;
  }
}

/** Configured journal mode on the repaired copy, old sidecars removed, one rename over the original. */
function promote(file: string, path: string, journalMode: string, synchronous: string): void {
  setJournalMode(file, journalMode, synchronous);
  chmodSync(file, 0o600);
  fsyncFile(file);
  for (const suffix of SIDECAR_SUFFIXES) rmSync(path + suffix, { force: true });
  failpoint("repair.mid-promote");
  renameSync(file, path);
  fsyncFile(join(path, ".."));
}

function failed(message: string): HearthError {
  return new HearthError(
    "HEARTH_REPAIR_FAILED",
    `repair failed: ${message}; the store was left exactly as it was`,
    {
      hint: "run it again later (it stops after 3 failures on the same damage), or restore a backup: hearth restore <file> --yes",
    },
  );
}

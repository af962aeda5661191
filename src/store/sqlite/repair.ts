import Database from "better-sqlite3";
import { HearthError } from "../../errors.js";
import { searchDegradedReason } from "./fts-merge.js";
import { rebuildFts, type SalvageCounts, salvage } from "./salvage.js";

export { rebuildFts, type SalvageCounts };

export interface Health {
  /** quick_check problems outside the search index. */
  canonical: string[];
  /** Search-index damage (quick_check on its shadow tables, or its integrity-check), or null. */
  fts: string | null;
}

export function checkHealth(db: Database.Database): Health {
  let problems: string[];
  try {
    problems = (db.pragma("quick_check") as { quick_check: string }[])
      .map((r) => r.quick_check)
      .filter((r) => r !== "ok");
  } catch (err) {
    return { canonical: [`quick_check failed: ${(err as Error).message}`], fts: null };
  }
  const ftsProblems = problems.filter((p) => p.includes("messages_fts"));
  const canonical = problems.filter((p) => !p.includes("messages_fts"));
  let fts: string | null = ftsProblems.length > 0 ? ftsProblems.join("; ") : null;
  if (fts === null && canonical.length === 0) {
    const flag = degradedFlag(db);
    if (flag !== null) return { canonical, fts: `marked degraded: ${flag}` };
    try {
      db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)");
    } catch (err) {
      fts = (err as Error).message;
    }
  }
  return { canonical, fts };
}

export function healthy(h: Health): boolean {
  return h.canonical.length === 0 && h.fts === null;
}

function degradedFlag(db: Database.Database): string | null {
  try {
    return searchDegradedReason((sql) => db.prepare<unknown[]>(sql));
  } catch {
    return null;
  }
}

export function reindex(db: Database.Database): void {
  db.exec("REINDEX");
}

export type RepairStrategy = "none" | "fts-rebuild" | "reindex" | "salvage";

/**
 * Repair strategies on a snapshot of a damaged store, least destructive
 * first (search-index rebuild, REINDEX, salvage of readable rows into
 * `salvageTarget`); each result is checked before it is accepted. Returns
 * the file to promote. Throws HEARTH_REPAIR_FAILED when none works.
 */
export function repairSnapshot(
  snapshot: string,
  salvageTarget: string,
  dryRun: boolean,
): {
  strategy: RepairStrategy;
  file: string;
  before: Health;
  salvaged?: SalvageCounts;
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

function failed(message: string): HearthError {
  return new HearthError(
    "HEARTH_REPAIR_FAILED",
    `repair failed: ${message}; the store was left exactly as it was`,
    {
      hint: "run it again later (it stops after 3 failures on the same damage), or restore a backup: hearth restore <file> --yes",
    },
  );
}

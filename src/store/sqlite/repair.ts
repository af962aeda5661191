import Database from "better-sqlite3";
import { HearthError } from "../../errors.js";
import { HEARTH_APPLICATION_ID } from "../../files/inspect.js";
import { searchDegradedReason } from "./fts-merge.js";
import { MIGRATIONS } from "./migrations.js";

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

/** Rebuild the derived search index from the messages table (never touches canonical rows), and clear the degraded mark. */
export function rebuildFts(db: Database.Database): void {
  db.transaction(() => {
    db.exec("DELETE FROM meta WHERE key = 'fts_degraded'");
    db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')");
    // One segment: with automatic merges off (schema version 9) a rebuild
    // leaves many, which writes would otherwise merge a few pages at a time.
    db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')");
  })();
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

export interface SalvageCounts {
  sessions: number;
  messages: number;
  meta: number;
}

/**
 * Copy every readable row of the canonical tables into a fresh store at
 * `target` (schema from this build's migrations), then build its search
 * index. A table whose b-tree breaks mid-scan is read from both ends, so
 * rows on either side of the damage survive. Messages whose session was
 * lost are dropped (they could not be shown). Throws when not even the
 * schema can be read: there is nothing to salvage.
 */
export function salvage(source: Database.Database, target: string): SalvageCounts {
  const fresh = new Database(target);
  try {
    fresh.pragma(`application_id = ${HEARTH_APPLICATION_ID}`);
    for (const m of MIGRATIONS) fresh.exec(m.sql);
    fresh.pragma(`user_version = ${MIGRATIONS[MIGRATIONS.length - 1]!.version}`);
    const sessions = copyTable(source, fresh, "sessions");
    const messages = copyTable(source, fresh, "messages");
    const meta = copyTable(source, fresh, "meta");
    // LangGraph checkpoints (hearth/langgraph) are canonical too; keyed tables, absent before schema 7.
    for (const [table, key] of GRAPH_TABLES) copyKeyed(source, fresh, table, key);
    const orphans = fresh
      .prepare("DELETE FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)")
      .run().changes;
    rebuildFts(fresh);
    return { sessions, messages: messages - orphans, meta };
  } finally {
    fresh.close();
  }
}

function copyTable(source: Database.Database, fresh: Database.Database, table: string): number {
  let columns: string[];
  try {
    columns = (source.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
  } catch (err) {
    throw new HearthError(
      "HEARTH_REPAIR_FAILED",
      `the schema of ${table} cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (columns.length === 0)
    throw new HearthError(
      "HEARTH_REPAIR_FAILED",
      `table ${table} is missing from the damaged store`,
    );
  const list = columns.map((c) => `"${c}"`).join(", ");
  const insert = fresh.prepare(
    `INSERT OR IGNORE INTO ${table} (rowid, ${list}) VALUES (?, ${columns.map(() => "?").join(", ")})`,
  );
  return scanBothEnds(
    source,
    fresh,
    (order) => `SELECT rowid AS __rowid, ${list} FROM ${table} ORDER BY rowid ${order}`,
    (row) => Number(row[0]),
    insert,
  );
}

const GRAPH_TABLES: readonly (readonly [string, readonly string[]])[] = [
  ["graph_checkpoints", ["thread_id", "checkpoint_ns", "checkpoint_id"]],
  ["graph_blobs", ["thread_id", "checkpoint_ns", "checkpoint_id", "channel"]],
  ["graph_writes", ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"]],
];

/** copyTable for a WITHOUT ROWID table: both ends of its primary key. Returns rows copied. */
function copyKeyed(
  source: Database.Database,
  fresh: Database.Database,
  table: string,
  key: readonly string[],
): number {
  let columns: string[];
  try {
    columns = (source.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
  } catch {
    return 0; // its schema is unreadable: nothing of it can be saved
  }
  if (columns.length === 0) return 0; // a store from before the table existed
  const list = columns.map((c) => `"${c}"`).join(", ");
  const at = key.map((k) => columns.indexOf(k));
  const insert = fresh.prepare(
    `INSERT OR IGNORE INTO ${table} (${list}) VALUES (${columns.map(() => "?").join(", ")})`,
  );
  return scanBothEnds(
    source,
    fresh,
    (order) =>
      `SELECT ${list} FROM ${table} ORDER BY ${key.map((k) => `${k} ${order}`).join(", ")}`,
    (row) => JSON.stringify(at.map((i) => row[i])),
    insert,
  );
}

/**
 * Read a damaged table from both ends of its key (a broken b-tree page
 * stops a scan; the other direction reads what lies beyond it) and insert
 * each row once. Returns rows copied.
 */
function scanBothEnds(
  source: Database.Database,
  fresh: Database.Database,
  select: (order: "ASC" | "DESC") => string,
  idOf: (row: unknown[]) => string | number,
  insert: Database.Statement,
): number {
  const seen = new Set<string | number>();
  const take = (order: "ASC" | "DESC") => {
    const rows = source.prepare(select(order)).raw();
    try {
      for (const row of rows.iterate() as Iterable<unknown[]>) {
        const id = idOf(row);
        if (seen.has(id)) return; // the two scans met
        seen.add(id);
        insert.run(...row);
      }
    } catch {
      // the b-tree broke here: keep what was read
    }
  };
  fresh.transaction(() => {
    take("ASC");
    take("DESC");
  })();
  return seen.size;
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

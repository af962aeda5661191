import Database from "better-sqlite3";
import { HearthError } from "../../errors.js";
import { HEARTH_APPLICATION_ID } from "../../files/inspect.js";
import { MIGRATIONS } from "./migrations.js";

export interface SalvageCounts {
  sessions: number;
  messages: number;
  meta: number;
  /** Rows kept of every table copied (the three above included), by table. */
  tables: Record<string, number>;
}

/** Tables a salvage must be able to read: without them there is nothing to save. */
const REQUIRED = new Set(["sessions", "messages", "meta"]);

/**
 * Copy every readable row of every table of the store into a fresh store at
 * `target` (schema from this build's migrations), then build its search
 * index. Every table is data somebody relies on (job runs, the audit log,
 * tokens, grants…), so none is left behind: only the search index (derived,
 * rebuilt) and SQLite's own tables are not copied. A table whose b-tree
 * breaks mid-scan is read from both ends, so rows on either side of the
 * damage survive. A row whose parent was lost goes the way a delete of its
 * parent would take it (ON DELETE CASCADE: dropped, SET NULL: unlinked).
 * Throws when not even the schema of sessions, messages or meta can be read.
 */
export function salvage(source: Database.Database, target: string): SalvageCounts {
  const fresh = new Database(target);
  try {
    fresh.pragma(`application_id = ${HEARTH_APPLICATION_ID}`);
    for (const m of MIGRATIONS) fresh.exec(m.sql);
    fresh.pragma(`user_version = ${MIGRATIONS[MIGRATIONS.length - 1]!.version}`);
    // Rows arrive in key order, a child possibly before its parent: links are checked after.
    fresh.pragma("foreign_keys = OFF");
    const tables: Record<string, number> = {};
    for (const t of copiedTables(fresh)) tables[t.name] = copyTable(source, fresh, t);
    const dropped = dropOrphans(fresh);
    rebuildFts(fresh);
    for (const [table, n] of Object.entries(dropped)) tables[table] = (tables[table] ?? 0) - n;
    return {
      sessions: tables.sessions ?? 0,
      messages: tables.messages ?? 0,
      meta: tables.meta ?? 0,
      tables,
    };
  } finally {
    fresh.close();
  }
}

interface TableInfo {
  name: string;
  withoutRowid: boolean;
  /** Primary-key columns in key order (WITHOUT ROWID tables). */
  key: string[];
}

/** The fresh store's tables, minus the search index (and its shadow tables) and SQLite's own. */
function copiedTables(fresh: Database.Database): TableInfo[] {
  const rows = fresh
    .prepare(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rootpage",
    )
    .all() as { name: string; sql: string | null }[];
  const fts = rows.filter((r) => /CREATE VIRTUAL TABLE/i.test(r.sql ?? "")).map((r) => r.name);
  return rows
    .filter((r) => !fts.some((v) => r.name === v || r.name.startsWith(`${v}_`)))
    .map((r) => {
      const cols = fresh.pragma(`table_info("${r.name}")`) as { name: string; pk: number }[];
      return {
        name: r.name,
        withoutRowid: /WITHOUT\s+ROWID/i.test(r.sql ?? ""),
        key: cols
          .filter((c) => c.pk > 0)
          .sort((x, y) => x.pk - y.pk)
          .map((c) => c.name),
      };
    });
}

function copyTable(source: Database.Database, fresh: Database.Database, t: TableInfo): number {
  let columns: string[];
  try {
    columns = (source.pragma(`table_info("${t.name}")`) as { name: string }[]).map((c) => c.name);
  } catch (err) {
    if (!REQUIRED.has(t.name)) return 0; // its schema is unreadable: nothing of it can be saved
    throw new HearthError(
      "HEARTH_REPAIR_FAILED",
      `the schema of ${t.name} cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (columns.length === 0) {
    if (!REQUIRED.has(t.name)) return 0; // a store from before the table existed
    throw new HearthError(
      "HEARTH_REPAIR_FAILED",
      `table ${t.name} is missing from the damaged store`,
    );
  }
  // Only the columns this build's schema has (a column a later migration dropped is not kept).
  const known = new Set(
    (fresh.pragma(`table_info("${t.name}")`) as { name: string }[]).map((c) => c.name),
  );
  columns = columns.filter((c) => known.has(c));
  const list = columns.map((c) => `"${c}"`).join(", ");
  const marks = columns.map(() => "?").join(", ");
  if (!t.withoutRowid) {
    const insert = fresh.prepare(
      `INSERT OR IGNORE INTO "${t.name}" (rowid, ${list}) VALUES (?, ${marks})`,
    );
    return scanBothEnds(
      source,
      fresh,
      (order) => `SELECT rowid AS __rowid, ${list} FROM "${t.name}" ORDER BY rowid ${order}`,
      (row) => Number(row[0]),
      insert,
    );
  }
  const at = t.key.map((k) => columns.indexOf(k));
  const insert = fresh.prepare(`INSERT OR IGNORE INTO "${t.name}" (${list}) VALUES (${marks})`);
  return scanBothEnds(
    source,
    fresh,
    (order) =>
      `SELECT ${list} FROM "${t.name}" ORDER BY ${t.key.map((k) => `"${k}" ${order}`).join(", ")}`,
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
    let rows: Database.Statement;
    try {
      rows = source.prepare(select(order)).raw();
    } catch {
      return; // unreadable from this end
    }
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

/** Rows whose parent row was lost, handled as the parent's ON DELETE says. Returns rows dropped, by table. */
function dropOrphans(fresh: Database.Database): Record<string, number> {
  const dropped: Record<string, number> = {};
  // A cascade can orphan rows of another table: until nothing is left.
  for (let pass = 0; pass < 8; pass++) {
    const bad = fresh.pragma("foreign_key_check") as {
      table: string;
      rowid: number | null;
      fkid: number;
    }[];
    if (bad.length === 0) break;
    fresh.transaction(() => {
      for (const v of bad) {
        const fk = (
          fresh.pragma(`foreign_key_list("${v.table}")`) as {
            id: number;
            from: string;
            on_delete: string;
          }[]
        ).find((f) => f.id === v.fkid);
        if (v.rowid === null || !fk) continue;
        if (fk.on_delete === "SET NULL")
          fresh.prepare(`UPDATE "${v.table}" SET "${fk.from}" = NULL WHERE rowid = ?`).run(v.rowid);
        else if (fresh.prepare(`DELETE FROM "${v.table}" WHERE rowid = ?`).run(v.rowid).changes)
          dropped[v.table] = (dropped[v.table] ?? 0) + 1;
      }
    })();
  }
  return dropped;
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

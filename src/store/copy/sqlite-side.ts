/**
 * The SQLite end of `hearth migrate --to`: its tables' columns, rows read in
 * key order in chunks (integers as bigint, so nothing above 2^53 is
 * rounded), the content hash of every table, and rows written into a store
 * no other process knows yet.
 */
import type Database from "better-sqlite3";
import { HearthError } from "../../errors.js";
import {
  type Column,
  kindOf,
  PG_TABLES,
  PROGRESS_KEY,
  TABLE_KEYS,
  TableHasher,
  type TableHashes,
  type TableSpec,
} from "./tables.js";

export type Row = Record<string, unknown>;

/** Each copied table's columns as this SQLite database declares them. */
export function sqliteSpecs(db: Database.Database): TableSpec[] {
  return PG_TABLES.map((name) => {
    const info = db.prepare(`PRAGMA table_info(${name})`).all() as {
      name: string;
      type: string;
    }[];
    if (info.length === 0)
      throw new HearthError(
        "HEARTH_MIGRATE_MISMATCH",
        `the SQLite store has no ${name} table (schema older than this hearth?)`,
        {
          resource: name,
          hint: "open it once with this hearth (hearth doctor --fix) to migrate it",
        },
      );
    const columns: Column[] = info.map((c) => ({
      name: c.name,
      kind: kindOf(c.type, name, c.name),
    }));
    return { name, key: TABLE_KEYS[name], columns };
  });
}

function where(spec: TableSpec): string {
  // The progress row is hearth migrate's own, never part of the copy.
  return spec.name === "meta" ? `key <> '${PROGRESS_KEY}'` : "1";
}

/** Up to `limit` rows after the key `after` (undefined: from the start), in key order. */
export function readChunk(
  db: Database.Database,
  spec: TableSpec,
  after: readonly unknown[] | undefined,
  limit: number,
): Row[] {
  const cols = spec.columns.map((c) => c.name).join(", ");
  const key = spec.key.join(", ");
  const marks = spec.key.map(() => "?").join(", ");
  const past = after === undefined ? "" : ` AND (${key}) > (${marks})`;
  const stmt = db.prepare(
    `SELECT ${cols} FROM ${spec.name} WHERE ${where(spec)}${past} ORDER BY ${key} LIMIT +?`,
  );
  stmt.safeIntegers(true);
  return stmt.all(...(after === undefined ? [] : keyParams(spec, after)), limit) as Row[];
}

/** A stored key (integers kept as decimal text in JSON) as SQLite parameters. */
function keyParams(spec: TableSpec, key: readonly unknown[]): unknown[] {
  return key.map((v, i) => {
    const col = spec.columns.find((c) => c.name === spec.key[i]);
    return col?.kind === "integer" ? BigInt(v as string) : v;
  });
}

/** A row's key, JSON-safe (integers as decimal text). */
export function rowKey(spec: TableSpec, row: Row): string[] {
  return spec.key.map((k) => {
    const v = row[k];
    return typeof v === "bigint" || typeof v === "number" ? v.toString() : String(v);
  });
}

/**
 * Every table's count and hash, in one pass per table. With `refuseNul`,
 * a text value holding NUL (which PostgreSQL cannot store) is refused,
 * naming its table and key.
 */
export function hashSqliteTables(
  db: Database.Database,
  specs: readonly TableSpec[],
  options: { refuseNul?: boolean } = {},
): TableHashes {
  const out: TableHashes = {};
  for (const spec of specs) {
    const hasher = new TableHasher(spec.columns);
    const texts = spec.columns.filter((c) => c.kind === "text").map((c) => c.name);
    const stmt = db.prepare(
      `SELECT ${spec.columns.map((c) => c.name).join(", ")} FROM ${spec.name} WHERE ${where(spec)} ORDER BY ${spec.key.join(", ")}`,
    );
    stmt.safeIntegers(true);
    for (const row of stmt.iterate() as Iterable<Row>) {
      if (options.refuseNul) {
        const bad = texts.find(
          (c) => typeof row[c] === "string" && (row[c] as string).includes("\0"),
        );
        if (bad !== undefined) throw unrepresentable(spec, row, bad);
      }
      hasher.add(row);
    }
    out[spec.name] = hasher.digest();
  }
  return out;
}

function unrepresentable(spec: TableSpec, row: Row, column: string): HearthError {
  const key = rowKey(spec, row);
  return new HearthError(
    "HEARTH_VALUE_UNREPRESENTABLE",
    `${spec.name} row ${spec.key.map((k, i) => `${k}=${JSON.stringify(key[i])}`).join(" ")}: ${column} contains a NUL character, which PostgreSQL text cannot hold; nothing was copied`,
    {
      resource: `${spec.name}/${key.join("/")}`,
      hint: "change or delete that row in the SQLite store, then run hearth migrate --to again",
      details: { table: spec.name, key, column },
    },
  );
}

/** Insert `rows` (values as the PostgreSQL driver returns them) into one table, in the caller's transaction. */
export function insertRows(db: Database.Database, spec: TableSpec, rows: readonly Row[]): void {
  const names = spec.columns.map((c) => c.name);
  const stmt = db.prepare(
    `INSERT INTO ${spec.name} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
  );
  for (const row of rows) stmt.run(...spec.columns.map((c) => toSqlite(c, row[c.name])));
}

function toSqlite(column: Column, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (column.kind === "integer") return typeof v === "string" ? BigInt(v) : v;
  return v;
}

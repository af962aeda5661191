/**
 * The PostgreSQL end of `hearth migrate --to`: its tables' stored columns,
 * rows streamed in key order through a cursor (text keys in "C" collation,
 * byte order, as SQLite's BINARY sorts them), content hashes computed the
 * same way as on SQLite, and multi-row INSERTs of copied rows.
 */
import type { PgClient } from "../pg/pool.js";
import type { Row } from "./sqlite-side.js";
import {
  assertSameColumns,
  PROGRESS_KEY,
  TableHasher,
  type TableHashes,
  type TableSpec,
} from "./tables.js";

/** PostgreSQL's bind-parameter limit is 65535; stay well under it. */
const MAX_PARAMS = 60_000;

/** Rows per INSERT statement for this table (about 1000, fewer for wide tables). */
export function rowsPerInsert(spec: TableSpec, wanted = 1000): number {
  return Math.max(1, Math.min(wanted, Math.floor(MAX_PARAMS / spec.columns.length)));
}

/** Refuse unless each table has exactly the SQLite side's stored columns. */
export async function assertPgColumns(
  client: PgClient,
  specs: readonly TableSpec[],
): Promise<void> {
  const { rows } = await client.query(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_generated = 'NEVER'`,
  );
  for (const spec of specs) {
    const pg = rows.filter((r) => r.table_name === spec.name).map((r) => r.column_name as string);
    assertSameColumns(
      spec.name,
      spec.columns.map((c) => c.name),
      pg,
    );
  }
}

function orderBy(spec: TableSpec): string {
  return spec.key
    .map((k) => {
      const kind = spec.columns.find((c) => c.name === k)?.kind;
      return kind === "text" ? `${k} COLLATE "C"` : k;
    })
    .join(", ");
}

export function pgWhere(spec: TableSpec): string {
  return spec.name === "meta" ? `key <> '${PROGRESS_KEY}'` : "true";
}

/**
 * Every row of a table in key order, `batch` at a time, through a cursor
 * (the caller's transaction gives the snapshot).
 */
export async function streamPgRows(
  client: PgClient,
  spec: TableSpec,
  batch: number,
  onRows: (rows: Row[]) => void | Promise<void>,
): Promise<void> {
  const cursor = `hearth_copy_${spec.name}`;
  await client.query(
    `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${spec.columns.map((c) => c.name).join(", ")} FROM ${spec.name} WHERE ${pgWhere(spec)} ORDER BY ${orderBy(spec)}`,
  );
  try {
    for (;;) {
      const { rows } = await client.query(`FETCH ${batch} FROM ${cursor}`);
      if (rows.length === 0) break;
      await onRows(rows);
    }
  } finally {
    await client.query(`CLOSE ${cursor}`);
  }
}

/** Every table's count and hash, read in the caller's transaction (one snapshot). */
export async function hashPgTables(
  client: PgClient,
  specs: readonly TableSpec[],
): Promise<TableHashes> {
  const out: TableHashes = {};
  for (const spec of specs) {
    const hasher = new TableHasher(spec.columns);
    await streamPgRows(client, spec, 5000, (rows) => {
      for (const row of rows) hasher.add(row);
    });
    out[spec.name] = hasher.digest();
  }
  return out;
}

/**
 * Insert rows read from SQLite (integers as bigint) in multi-row INSERTs.
 * `omit` columns are written as NULL (sessions.parent_id, set after every
 * session exists: a parent may sort after its child).
 */
export async function insertPgRows(
  client: PgClient,
  spec: TableSpec,
  rows: readonly Row[],
  omit: readonly string[] = [],
): Promise<void> {
  const names = spec.columns.map((c) => c.name);
  const per = rowsPerInsert(spec);
  for (let start = 0; start < rows.length; start += per) {
    const slice = rows.slice(start, start + per);
    const params: unknown[] = [];
    const tuples = slice.map((row) => {
      const marks = spec.columns.map((c) => {
        params.push(omit.includes(c.name) ? null : toPg(row[c.name]));
        return `$${params.length}`;
      });
      return `(${marks.join(", ")})`;
    });
    await client.query(
      `INSERT INTO ${spec.name} (${names.join(", ")}) VALUES ${tuples.join(", ")}`,
      params,
    );
  }
}

function toPg(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  return v;
}

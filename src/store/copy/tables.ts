/**
 * What `hearth migrate --to` copies and how it proves the copy: every table
 * of PG_TABLES, read and written in primary-key order (byte order of the
 * UTF-8 text, SQLite's BINARY collation and PostgreSQL's "C"), each row
 * hashed the same way on both backends. A table's hash is SHA-256 over its
 * rows in key order; each value is tagged by its column's kind so that NULL
 * differs from '' and from 0: integers as decimal text, text as UTF-8,
 * blobs as their bytes, each length-prefixed.
 */
import { createHash, type Hash } from "node:crypto";
import { HearthError } from "../../errors.js";
import { PG_TABLES } from "../pg/schema.js";

export type CopyTable = (typeof PG_TABLES)[number];
export type ColumnKind = "integer" | "text" | "blob";

export interface Column {
  name: string;
  kind: ColumnKind;
}

export interface TableSpec {
  name: CopyTable;
  /** Primary-key columns, in key order. */
  key: readonly string[];
  /** Every stored column (generated ones excluded), in the SQLite table's order. */
  columns: readonly Column[];
}

/** The primary key of each copied table. */
export const TABLE_KEYS: Record<CopyTable, readonly string[]> = {
  sessions: ["id"],
  messages: ["id"],
  meta: ["key"],
  auth_families: ["id"],
  auth_tokens: ["hash"],
  job_runs: ["id"],
  health_samples: ["at"],
  suffix_edits: ["session_id", "idempotency_key"],
  graph_checkpoints: ["thread_id", "checkpoint_ns", "checkpoint_id"],
  graph_blobs: ["thread_id", "checkpoint_ns", "checkpoint_id", "channel"],
  graph_writes: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
  audit_log: ["id"],
  tool_permissions: ["session_id", "call_id"],
  tool_grants: ["session_id", "tool"],
};

/** Tables whose integer key is an identity column on PostgreSQL: its sequence moves past the copied ids. */
export const IDENTITY_TABLES: readonly CopyTable[] = ["messages", "job_runs", "audit_log"];

/**
 * The target's meta row that marks a copy in progress (source fingerprint,
 * last copied key per table). Never part of a table's count or hash; removed
 * when the copy is verified.
 */
export const PROGRESS_KEY = "hearth.migrate-to.progress";

/** Each table's row count and content hash. */
export type TableHashes = Record<string, { rows: number; sha256: string }>;

/** The kind of a SQLite STRICT column type. */
export function kindOf(declared: string, table: string, column: string): ColumnKind {
  const t = declared.toUpperCase();
  if (t === "INTEGER") return "integer";
  if (t === "TEXT") return "text";
  if (t === "BLOB") return "blob";
  throw new HearthError(
    "HEARTH_MIGRATE_MISMATCH",
    `${table}.${column} has type ${declared}, which hearth migrate cannot copy`,
    { resource: `${table}.${column}`, hint: "hearth doctor" },
  );
}

/** Refuse when the two sides do not have the same columns (a lossless copy needs every one). */
export function assertSameColumns(
  table: string,
  sqlite: readonly string[],
  pg: readonly string[],
): void {
  const missing = sqlite.filter((c) => !pg.includes(c));
  const extra = pg.filter((c) => !sqlite.includes(c));
  if (missing.length === 0 && extra.length === 0) return;
  throw new HearthError(
    "HEARTH_MIGRATE_MISMATCH",
    `the ${table} table differs between the two stores (only in SQLite: ${missing.join(", ") || "none"}; only in PostgreSQL: ${extra.join(", ") || "none"})`,
    {
      resource: table,
      hint: "run the same hearth version on both sides: each store is migrated to its latest schema first",
      details: { table, onlySqlite: missing, onlyPg: extra },
    },
  );
}

/** The hash of one table's rows, fed in key order. */
export class TableHasher {
  rows = 0;
  private readonly hash: Hash = createHash("sha256");
  constructor(private readonly columns: readonly Column[]) {}

  /** `row` holds values by column name, as either driver returns them. */
  add(row: Record<string, unknown>): void {
    this.rows++;
    for (const c of this.columns) {
      const v = row[c.name];
      if (v === null || v === undefined) {
        this.hash.update("N;");
        continue;
      }
      if (c.kind === "integer") {
        this.hash.update(`I${integerText(v)};`);
      } else if (c.kind === "text") {
        const text = String(v);
        this.hash.update(`T${Buffer.byteLength(text)}:`);
        this.hash.update(text);
      } else {
        const bytes = Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array);
        this.hash.update(`B${bytes.length}:`);
        this.hash.update(bytes);
      }
    }
    this.hash.update("\n");
  }

  digest(): { rows: number; sha256: string } {
    return { rows: this.rows, sha256: this.hash.digest("hex") };
  }
}

/** An integer as decimal text, whether it came as number, bigint or (PostgreSQL BIGINT) string. */
export function integerText(v: unknown): string {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && Number.isInteger(v)) return String(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v).toString();
  throw new HearthError("HEARTH_MIGRATE_MISMATCH", `expected an integer, got ${String(v)}`, {
    hint: "hearth doctor",
  });
}

/** Tables (and their counts and hashes) that differ between two sides. */
export function compareHashes(
  source: TableHashes,
  target: TableHashes,
): { table: string; source: TableHashes[string] | null; target: TableHashes[string] | null }[] {
  const names = [...new Set([...Object.keys(source), ...Object.keys(target)])];
  return names
    .filter((t) => source[t]?.rows !== target[t]?.rows || source[t]?.sha256 !== target[t]?.sha256)
    .map((t) => ({ table: t, source: source[t] ?? null, target: target[t] ?? null }));
}

export function mismatch(
  source: TableHashes,
  target: TableHashes,
  where: string,
): HearthError | undefined {
  const diff = compareHashes(source, target);
  if (diff.length === 0) return undefined;
  return new HearthError(
    "HEARTH_MIGRATE_MISMATCH",
    `the copy in ${where} does not match its source: ${diff
      .map((d) => `${d.table} (${d.source?.rows ?? "-"} rows vs ${d.target?.rows ?? "-"})`)
      .join(", ")}`,
    {
      resource: where,
      hint: "run it again with --force to copy from scratch",
      details: { tables: diff },
    },
  );
}

export { PG_TABLES };

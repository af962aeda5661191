/**
 * What a PostgreSQL store reports about itself: durability settings read
 * back from the server, the schema version, and a cheap consistency check.
 */
import type { PgDurabilityReport } from "../types.js";
import type { PgDb } from "./pool.js";
import { PG_LATEST_SCHEMA_VERSION, PG_TABLES } from "./schema.js";

export async function readPgDurability(db: PgDb): Promise<PgDurabilityReport> {
  const { rows } = await db.query(
    "read the server's durability settings",
    `SELECT name, setting FROM pg_settings
      WHERE name IN ('server_version', 'synchronous_commit', 'fsync', 'full_page_writes', 'wal_level')`,
  );
  const s = Object.fromEntries(rows.map((r) => [r.name as string, r.setting as string]));
  const weaknesses: string[] = [];
  if (s.fsync === "off")
    weaknesses.push("fsync is off: a server crash can lose or corrupt committed data");
  if (s.full_page_writes === "off")
    weaknesses.push("full_page_writes is off: an OS crash can leave torn pages");
  if (s.synchronous_commit === "off")
    weaknesses.push(
      "synchronous_commit is off: the last commits before a server crash can be lost",
    );
  return {
    backend: "postgres",
    serverVersion: s.server_version ?? "unknown",
    synchronousCommit: s.synchronous_commit ?? "unknown",
    fsync: s.fsync ?? "unknown",
    fullPageWrites: s.full_page_writes ?? "unknown",
    walLevel: s.wal_level ?? "unknown",
    weaknesses,
  };
}

export async function readPgSchema(db: PgDb): Promise<{ version: number; applicationId: number }> {
  const { rows } = await db.query(
    "read the schema version",
    "SELECT max(version) AS v FROM hearth_schema",
  );
  return { version: Number(rows[0]?.v ?? 0), applicationId: 0 };
}

/**
 * What PostgreSQL can check cheaply (no table scans): the schema version is
 * the one this build reads, every hearth table is there, no index is left
 * invalid (a failed CREATE INDEX CONCURRENTLY or REINDEX), and the
 * database's own counters show no checksum failures. Page-level checks
 * (amcheck, pg_checksums) are the DBA's, not hearth's.
 */
export async function pgQuickCheck(db: PgDb): Promise<{ ok: boolean; problems: string[] }> {
  const problems: string[] = [];
  const { version } = await readPgSchema(db);
  if (version !== PG_LATEST_SCHEMA_VERSION)
    problems.push(`schema version is ${version}, this build reads ${PG_LATEST_SCHEMA_VERSION}`);
  const tables = await db.query(
    "check the tables",
    `SELECT t.name FROM unnest($1::text[]) AS t(name)
      WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                         WHERE c.relname = t.name AND n.nspname = current_schema())`,
    [[...PG_TABLES]],
  );
  for (const r of tables.rows) problems.push(`table ${r.name} is missing`);
  const invalid = await db.query(
    "check the indexes",
    `SELECT c.relname FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND (NOT i.indisvalid OR NOT i.indisready)`,
  );
  for (const r of invalid.rows)
    problems.push(
      `index ${r.relname} is invalid (rebuild it: REINDEX INDEX CONCURRENTLY ${r.relname})`,
    );
  const checksums = await db.query(
    "check the checksum counters",
    "SELECT checksum_failures FROM pg_stat_database WHERE datname = current_database()",
  );
  const failures = Number(checksums.rows[0]?.checksum_failures ?? 0);
  if (failures > 0)
    problems.push(`the server counted ${failures} data checksum failures in this database`);
  return { ok: problems.length === 0, problems };
}

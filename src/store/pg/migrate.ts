/**
 * Bring a PostgreSQL database to hearth's latest schema, under an advisory
 * lock: two processes that open a new database at once apply each migration
 * once; a migration that waits too long for the lock refuses and names the
 * connections that hold it (pg_stat_activity). A database written by a newer
 * hearth is refused; a database holding tables that are not hearth's is
 * refused rather than written into.
 */
import { HearthError } from "../../errors.js";
import { fromPgError, maskUrl, type PgClient, type PgPool } from "./pool.js";
import { PG_LATEST_SCHEMA_VERSION, PG_MIGRATIONS, type PgMigration } from "./schema.js";

/** The advisory lock key hearth's migrations take ('hearth' as a 32-bit tag, and 1). */
export const MIGRATION_LOCK: readonly [number, number] = [0x68656172, 1];

export interface PgMigrateResult {
  from: number;
  to: number;
}

export interface PgHolder {
  pid: number;
  applicationName: string;
  clientAddr: string | null;
  state: string | null;
  since: string | null;
}

/** Connections holding the advisory lock `key` (pg_locks joined with pg_stat_activity). */
export async function advisoryHolders(
  client: PgClient,
  key: readonly [number, number],
): Promise<PgHolder[]> {
  const { rows } = await client.query(
    `SELECT a.pid, a.application_name, host(a.client_addr) AS client_addr, a.state, a.xact_start::text AS since
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2
        AND a.pid <> pg_backend_pid()`,
    [key[0] >>> 0, key[1]],
  );
  return rows.map((r) => ({
    pid: r.pid,
    applicationName: r.application_name,
    clientAddr: r.client_addr,
    state: r.state,
    since: r.since,
  }));
}

export function describePgHolders(holders: readonly PgHolder[]): string {
  if (holders.length === 0) return "nobody (it was released)";
  return holders
    .map(
      (h) =>
        `${h.applicationName || "(no application_name)"} (backend ${h.pid}${h.clientAddr ? ` from ${h.clientAddr}` : ""})`,
    )
    .join(", ");
}

export async function migratePg(
  pool: PgPool,
  url: string,
  options: {
    migrations?: readonly PgMigration[];
    lockWaitMs?: number;
    /** store.pg.schema: created (when missing) before hearth's first table. */
    schema?: string | undefined;
  } = {},
): Promise<PgMigrateResult> {
  const migrations = options.migrations ?? PG_MIGRATIONS;
  const latest = migrations[migrations.length - 1]?.version ?? PG_LATEST_SCHEMA_VERSION;
  let client: PgClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw fromPgError(err, url, "open the store");
  }
  try {
    // Fast path: an up-to-date schema needs no lock.
    const seen = await readVersion(client, url);
    if (seen !== undefined && seen > latest) throw tooNew(url, seen, latest);
    if (seen === latest) return { from: seen, to: seen };

    await client.query("BEGIN");
    try {
      // A migration (an index on a large table) is not bounded by store.pg.statementTimeoutMs.
      await client.query("SET LOCAL statement_timeout = 0");
      await takeLock(client, url, options.lockWaitMs ?? 30_000);
      const from = (await readVersion(client, url)) ?? 0;
      if (from > latest) throw tooNew(url, from, latest);
      if (from === 0) {
        // The name is checked by the config schema (lowercase, digits, _): safe unquoted.
        if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
        await assertNoForeignTables(client, url);
        await client.query(
          "CREATE TABLE hearth_schema (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)",
        );
      }
      for (const m of migrations) {
        if (m.version <= from) continue;
        await client.query(m.sql);
        await client.query(
          "INSERT INTO hearth_schema (version, description, applied_at) VALUES ($1, $2, $3)",
          [m.version, m.description, Date.now()],
        );
      }
      await client.query("COMMIT");
      return { from, to: latest };
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    }
  } catch (err) {
    throw fromPgError(err, url, "migrate the schema");
  } finally {
    client.release();
  }
}

/** The schema version, or undefined when hearth_schema does not exist. */
export async function readVersion(client: PgClient, url: string): Promise<number | undefined> {
  // A scan of pg_class under this statement's snapshot: to_regclass() would
  // answer from the backend's name cache, which can still say "absent" for a
  // table another migration committed while this one waited for the lock.
  const { rows } = await client.query(
    `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = 'hearth_schema' AND n.nspname = current_schema()) AS present`,
  );
  if (!rows[0]?.present) return undefined;
  const v = await client.query("SELECT max(version) AS version FROM hearth_schema");
  const version = v.rows[0]?.version;
  if (version === null || version === undefined)
    throw new HearthError(
      "HEARTH_FOREIGN_DATABASE",
      `${maskUrl(url)} has an empty hearth_schema table`,
      {
        resource: maskUrl(url),
        hint: "point store.url at a database hearth created, or at an empty one",
      },
    );
  return Number(version);
}

async function takeLock(client: PgClient, url: string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { rows } = await client.query("SELECT pg_try_advisory_xact_lock($1, $2) AS got", [
      MIGRATION_LOCK[0],
      MIGRATION_LOCK[1],
    ]);
    if (rows[0]?.got) return;
    if (Date.now() >= deadline) {
      const holders = await advisoryHolders(client, MIGRATION_LOCK);
      throw new HearthError(
        "HEARTH_STORE_HELD",
        `refusing to migrate ${maskUrl(url)}: its migration lock is held by ${describePgHolders(holders)}`,
        {
          resource: maskUrl(url),
          hint: "wait for that migration to finish, or end that connection (pg_terminate_backend)",
          details: { holders },
        },
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Refuse a schema that holds relations hearth did not create, before
 * creating hearth's own there. Only hearth's schema (the connection's
 * current schema: store.pg.schema, else usually public) is looked at, and
 * what an extension installed there (pg_stat_statements' views) is not
 * foreign. `migrate --dry-run` asks the same question.
 */
export async function assertNoForeignTables(client: PgClient, url: string): Promise<void> {
  const { rows } = await client.query(
    `SELECT c.relname AS name FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                         WHERE d.classid = 'pg_catalog.pg_class'::regclass
                           AND d.objid = c.oid AND d.deptype = 'e')
      ORDER BY c.relname LIMIT 5`,
  );
  if (rows.length === 0) return;
  throw new HearthError(
    "HEARTH_FOREIGN_DATABASE",
    `${maskUrl(url)} already holds tables hearth did not create in its schema (${rows.map((r) => r.name).join(", ")})`,
    {
      resource: maskUrl(url),
      hint: "give hearth a schema of its own (store.pg.schema), or point store.url at an empty database (CREATE DATABASE hearth) or at one hearth created",
    },
  );
}

function tooNew(url: string, found: number, latest: number): HearthError {
  return new HearthError(
    "HEARTH_SCHEMA_TOO_NEW",
    `${maskUrl(url)} has schema version ${found}; this hearth knows up to ${latest}`,
    { resource: maskUrl(url), hint: "upgrade hearth on this host" },
  );
}

/**
 * `hearth restore <dump>` on a PostgreSQL store: pg_restore of a dump
 * `hearth backup` wrote into the configured database. The dump is verified
 * first (pg_restore --list, hearth_schema present). Refused while another
 * hearth process is connected to the database (pg_stat_activity names
 * them), and refused on a database that holds tables unless --force; with
 * --force the database's current content is first dumped to
 * backups/forensic/ (no copy, no restore). pg_restore runs as one
 * transaction: the database ends as the dump or as it was. The result is
 * read back: schema version and per-table row counts.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../config/load.js";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { ensurePrivateDir } from "../../files/create.js";
import { readVersion } from "../../store/pg/migrate.js";
import { createPool, fromPgError, maskUrl, type PgPool } from "../../store/pg/pool.js";
import { PG_TABLES } from "../../store/pg/schema.js";
import { wholeDatabase } from "../../store/pg/settings.js";
import type { OnProgress } from "../../store/progress.js";
import { forensicRoot } from "../forensic.js";
import { phases } from "../phases.js";
import { keepNewest, publishStaged, removeDeadStaging } from "../publish.js";
import { dumpArgs, verifyDump } from "./backup.js";
import { connection, findTool, runTool } from "./tools.js";

export interface PgRestoreResult {
  backend: "postgres";
  /** The database restored into, password masked. */
  path: string;
  from: string;
  dryRun: boolean;
  /** Where the replaced database's dump went (null when it held no tables). */
  forensicCopy: string | null;
  schemaVersion: number | null;
  /** Rows per table, read back after the restore. */
  counts: Record<string, number>;
}

export async function restorePg(options: {
  home: string;
  profile: string;
  url: string;
  from: string;
  force?: boolean;
  dryRun?: boolean;
  onProgress?: OnProgress;
  /** store.pg: its TLS settings reach hearth's queries and the tools. */
  settings?: PgSettings;
}): Promise<PgRestoreResult> {
  const progress = phases("restore", ["verify", "forensic copy", "restore"], options.onProgress);
  const { url } = options;
  progress.start("verify");
  const pgRestore = findTool("pg_restore");
  const ssl = options.settings?.ssl;
  const { dbname, env } = connection(url, "restore", ssl);
  await verifyDump(pgRestore, options.from, env, url);
  const whole = wholeDatabase(options.settings);
  const pool = createPool(url, { max: 1, kind: "restore", ...(whole ? { settings: whole } : {}) });
  try {
    await refuseOtherHearthConnections(pool, url);
    const tables = await userTables(pool, url);
    if (tables.length > 0 && !options.force)
      throw new HearthError(
        "HEARTH_TARGET_NOT_EMPTY",
        `refusing to restore into ${maskUrl(url)}: it already holds tables (${tables.slice(0, 5).join(", ")}); nothing was changed`,
        {
          resource: maskUrl(url),
          hint: "restore into an empty database (CREATE DATABASE …), or pass --force to replace this one (its current content is dumped to backups/forensic/ first)",
          details: { tables },
        },
      );
    const base = {
      backend: "postgres" as const,
      path: maskUrl(url),
      from: options.from,
    };
    if (options.dryRun)
      return { ...base, dryRun: true, forensicCopy: null, schemaVersion: null, counts: {} };
    progress.start("forensic copy");
    const forensicCopy =
      tables.length > 0 ? await forensicDump(options.home, options.profile, url, ssl) : null;
    progress.start("restore");
    await runTool(
      pgRestore,
      [
        "--single-transaction",
        "--exit-on-error",
        "--no-owner",
        "--no-privileges",
        ...(tables.length > 0 ? ["--clean", "--if-exists"] : []),
        `--dbname=${dbname}`,
        options.from,
      ],
      env,
      url,
      `restore ${options.from} into ${maskUrl(url)}`,
    );
    const client = await pool.connect().catch((err) => {
      throw fromPgError(err, url, "read the restored database");
    });
    try {
      const schemaVersion = (await readVersion(client, url)) ?? null;
      const counts: Record<string, number> = {};
      for (const t of PG_TABLES)
        counts[t] = Number((await client.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
      progress.done();
      return { ...base, dryRun: false, forensicCopy, schemaVersion, counts };
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

/** A restore replaces tables under every connection's feet: refuse while other hearth processes are connected. */
async function refuseOtherHearthConnections(pool: PgPool, url: string): Promise<void> {
  let rows: { pid: number; application_name: string; client_addr: string | null; since: string }[];
  try {
    ({ rows } = await pool.query(
      `SELECT pid, application_name, host(client_addr) AS client_addr, backend_start::text AS since
         FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE 'hearth:%'
          AND pid <> pg_backend_pid() ORDER BY backend_start`,
    ));
  } catch (err) {
    throw fromPgError(err, url, "list the database's connections");
  }
  if (rows.length === 0) return;
  throw new HearthError(
    "HEARTH_STORE_HELD",
    `refusing to restore into ${maskUrl(url)}: ${rows.length} hearth connection(s) use it: ${rows
      .map(
        (r) =>
          `${r.application_name} (backend ${r.pid}${r.client_addr ? ` from ${r.client_addr}` : ""}, since ${r.since})`,
      )
      .join(", ")}`,
    {
      resource: maskUrl(url),
      hint: "stop those processes (hearth ps lists them), then run the restore again",
      details: { holders: rows },
    },
  );
}

async function userTables(pool: PgPool, url: string): Promise<string[]> {
  try {
    const { rows } = await pool.query(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = current_schema() ORDER BY table_name`,
    );
    return rows.map((r) => r.table_name as string);
  } catch (err) {
    throw fromPgError(err, url, "list the database's tables");
  }
}

/** `<profile>-<ISO stamp with - for : and .>.replaced.pgdump`, the stamp's length fixed. */
const FORENSIC_NAME = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.replaced\.pgdump$/;
const FORENSIC_SUFFIX_LENGTH = "-2026-01-01T00-00-00-000Z.replaced.pgdump".length;

/** The database as it is, dumped to backups/forensic/<profile>-<stamp>.replaced.pgdump (newest backup.forensicKeep kept). */
async function forensicDump(
  home: string,
  profile: string,
  url: string,
  ssl: PgSettings["ssl"],
): Promise<string> {
  const dir = forensicRoot(home);
  ensurePrivateDir(dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const final = join(dir, `${profile}-${stamp}.replaced.pgdump`);
  const { dbname, env } = connection(url, "restore", ssl);
  removeDeadStaging(dir, profile);
  await publishStaged(dir, profile, final, (staging) =>
    runTool(
      findTool("pg_dump"),
      dumpArgs(staging, dbname),
      env,
      url,
      `dump ${maskUrl(url)} before replacing it`,
    ),
  );
  const keep = loadConfig({ home }).backup.forensicKeep;
  // This profile's dumps only: a profile "prod" must not count "prod-eu"'s.
  const mine = readdirSync(dir)
    .filter((n) => FORENSIC_NAME.test(n) && n.slice(0, -FORENSIC_SUFFIX_LENGTH) === profile)
    .sort()
    .reverse();
  await keepNewest(
    dir,
    mine.map((n) => join(dir, n)),
    keep,
  );
  return final;
}

/**
 * Opening a store on PostgreSQL: a pool named for this process, the schema
 * brought to the latest version under the migration lock (a writer), or
 * checked without writing (a reader: a database without hearth's schema is
 * HEARTH_STORE_NOT_FOUND, an older one HEARTH_SCHEMA_OUTDATED, a newer one
 * HEARTH_SCHEMA_TOO_NEW). A reader's connections run read-only.
 */
import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { type CopyInProgress, copyInProgress, migrationIncomplete } from "../copy/interrupted.js";
import type { ConnectionRole } from "../types.js";
import { migratePg, readVersion } from "./migrate.js";
import { storeUrlWithPassword } from "./password.js";
import { createPool, fromPgError, maskUrl, type PgPool, parseStoreUrl, pgDb } from "./pool.js";
import { PG_LATEST_SCHEMA_VERSION } from "./schema.js";
import { PgStore } from "./store.js";

export interface PgOpenOptions {
  url: string;
  home: string;
  profile: string;
  role: ConnectionRole;
  config: HearthConfig;
  /**
   * The caller's own pg.Pool: used as it is (its size, TLS and session
   * settings are the caller's), never ended by the store's close().
   */
  pool?: PgPool;
  /** Where PGPASSWORD is read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export async function openPgStore(options: PgOpenOptions): Promise<PgStore> {
  const { role } = options;
  parseStoreUrl(options.url);
  // The password from PGPASSWORD or store.passwordFile when the URL has none.
  const url = storeUrlWithPassword(options.url, {
    passwordFile: options.config.store.passwordFile,
    home: options.home,
    env: options.env ?? process.env,
  });
  const settings = options.config.store.pg;
  const owned = options.pool === undefined;
  const pool = options.pool ?? createPool(url, { settings, readOnly: role === "reader" });
  try {
    if (!owned) await checkCallerSchema(pool, url, settings.schema);
    if (role === "writer") {
      await migratePg(pool, url, { schema: settings.schema });
      await refuseUnfinishedCopy(pool, url);
    } else await checkReadable(pool, url, options.profile);
  } catch (err) {
    if (owned) await pool.end().catch(() => {});
    throw err;
  }
  return new PgStore({
    home: options.home,
    profile: options.profile,
    role,
    config: options.config,
    warnings: [],
    db: pgDb(pool, url, options.profile),
    ownsPool: owned,
  });
}

/**
 * A caller's pool with store.pg.schema set must already put that schema
 * first in search_path (hearth does not change the caller's connections):
 * otherwise hearth would read and write another schema's tables.
 */
async function checkCallerSchema(pool: PgPool, url: string, schema: string | undefined) {
  if (schema === undefined) return;
  let first: string | undefined;
  try {
    const { rows } = await pool.query("SELECT current_setting('search_path') AS path");
    first = String(rows[0]?.path ?? "")
      .split(",")[0]
      ?.trim()
      .replace(/^"|"$/g, "");
  } catch (err) {
    throw fromPgError(err, url, "read the pool's search_path");
  }
  if (first === schema) return;
  throw new HearthError(
    "HEARTH_CONFIG_INVALID",
    `store.pg.schema is ${schema}, but the connections of the pool given to openStore() search ${JSON.stringify(first)} first`,
    {
      resource: "store.pg.schema",
      hint: `create the pool with options: "-c search_path=${schema}" (or SET search_path on its connect event), or leave store.pg.schema unset`,
    },
  );
}

/** A database an interrupted `hearth migrate --to` left half-filled is not written into (HEARTH_MIGRATION_INCOMPLETE). */
async function refuseUnfinishedCopy(pool: PgPool, url: string): Promise<void> {
  let copy: CopyInProgress | undefined;
  try {
    copy = await copyInProgress(pool);
  } catch (err) {
    throw fromPgError(err, url, "open the store");
  }
  if (copy) throw migrationIncomplete(url, copy);
}

async function checkReadable(pool: PgPool, url: string, profile: string): Promise<void> {
  let version: number | undefined;
  try {
    const client = await pool.connect();
    try {
      version = await readVersion(client, url);
    } finally {
      client.release();
    }
  } catch (err) {
    throw fromPgError(err, url, "open the store");
  }
  const resource = maskUrl(url);
  if (version === undefined)
    throw new HearthError("HEARTH_STORE_NOT_FOUND", `no hearth store in ${resource}`, {
      resource,
      hint: `nothing has written to profile ${profile} there yet; a writer creates the schema (openStore() with role "writer")`,
    });
  if (version > PG_LATEST_SCHEMA_VERSION)
    throw new HearthError(
      "HEARTH_SCHEMA_TOO_NEW",
      `${resource} has schema version ${version}; this hearth knows up to ${PG_LATEST_SCHEMA_VERSION}`,
      { resource, hint: "upgrade hearth on this host" },
    );
  if (version < PG_LATEST_SCHEMA_VERSION)
    throw new HearthError(
      "HEARTH_SCHEMA_OUTDATED",
      `the schema of ${resource} is version ${version}; this build reads version ${PG_LATEST_SCHEMA_VERSION}`,
      { resource, hint: "open the store once with a writer to migrate it" },
    );
}

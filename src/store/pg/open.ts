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
import { createPool, fromPgError, maskUrl, type PgPool, pgDb } from "./pool.js";
import { PG_LATEST_SCHEMA_VERSION } from "./schema.js";
import { PgStore } from "./store.js";

export interface PgOpenOptions {
  url: string;
  home: string;
  profile: string;
  role: ConnectionRole;
  config: HearthConfig;
}

export async function openPgStore(options: PgOpenOptions): Promise<PgStore> {
  const { url, role } = options;
  const pool = createPool(url);
  if (role === "reader") {
    pool.on("connect", (client) => {
      client.query("SET default_transaction_read_only = on").catch(() => {});
    });
  }
  try {
    if (role === "writer") {
      await migratePg(pool, url);
      await refuseUnfinishedCopy(pool, url);
    } else await checkReadable(pool, url, options.profile);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  return new PgStore({
    home: options.home,
    profile: options.profile,
    role,
    config: options.config,
    warnings: [],
    db: pgDb(pool, url, options.profile),
  });
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

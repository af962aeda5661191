/**
 * PostgreSQL -> SQLite, the way back. The PostgreSQL source is read in one
 * REPEATABLE READ, READ ONLY transaction (one instant) through cursors in
 * key order, hashed as it streams. The SQLite store is made by openStore in
 * a staging home next to the target (hearth's own schema, file checks and
 * migrations), filled with one transaction per chunk, opened again and
 * hashed; only a verified copy is published, by a hard link that never
 * replaces an existing file. An interrupted run leaves only its staging
 * home (named with its pid), removed by the next run.
 */
import { existsSync, linkSync, lstatSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { failpoint } from "../../failpoints.js";
import { ensurePrivateDir } from "../../files/create.js";
import { sqliteOnly } from "../api.js";
import { openStore } from "../open.js";
import { readVersion } from "../pg/migrate.js";
import { createPool, fromPgError, maskUrl, type PgClient, type PgPool } from "../pg/pool.js";
import { PG_LATEST_SCHEMA_VERSION } from "../pg/schema.js";
import type { OnProgress } from "../progress.js";
import { internals } from "../sqlite/store.js";
import { assertPgColumns, streamPgRows } from "./pg-side.js";
import { hashSqliteTables, insertRows, sqliteSpecs } from "./sqlite-side.js";
import { mismatch, TableHasher, type TableHashes } from "./tables.js";
import type { CopyReport } from "./to-pg.js";

/** Copy the PostgreSQL store at `url` into a new SQLite file at `target` (which must not exist, or be empty). */
export async function copyPgToSqlite(
  url: string,
  target: string,
  options: { chunkRows?: number; onProgress?: OnProgress; settings?: PgSettings } = {},
): Promise<CopyReport> {
  const started = Date.now();
  const chunk = options.chunkRows ?? 1000;
  refuseExisting(target);
  const dir = dirname(target);
  if (!existsSync(dir)) ensurePrivateDir(dir);
  removeDeadStaging(dir, target);
  const staging = join(dir, `.hearth-migrate-${basename(target)}-${process.pid}.tmp`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const pool = createPool(url, {
      max: 1,
      kind: "migrate",
      ...(options.settings ? { settings: options.settings } : {}),
    });
    const sourceHashes = await fill(pool, url, staging, chunk, options.onProgress);
    const stagedHashes = await rehash(staging);
    const bad = mismatch(sourceHashes, stagedHashes, target);
    if (bad) throw bad;
    await publish(join(staging, "state.db"), target);
    const rows = Object.values(sourceHashes).reduce((n, t) => n + t.rows, 0);
    const durationMs = Date.now() - started;
    return {
      source: maskUrl(url),
      target,
      resumed: false,
      emptiedTarget: false,
      tables: Object.entries(sourceHashes).map(([table, h]) => ({ table, ...h, copied: h.rows })),
      rows,
      copied: rows,
      durationMs,
      rowsPerSecond: Math.round((rows * 1000) / Math.max(1, durationMs)),
      verified: true,
      dryRun: false,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function refuseExisting(target: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (st.isFile() && !st.isSymbolicLink() && st.size === 0) return;
  throw new HearthError(
    "HEARTH_TARGET_NOT_EMPTY",
    `refusing to write ${target}: it already exists${st.isFile() ? ` (${st.size} bytes)` : ""}; nothing was written`,
    {
      resource: target,
      hint: "choose a path that does not exist yet (or move that file away first)",
    },
  );
}

/** Read the source in one snapshot into a new store under `home`; the source's hashes. */
async function fill(
  pool: PgPool,
  url: string,
  home: string,
  chunk: number,
  onProgress: OnProgress | undefined,
): Promise<TableHashes> {
  const store = await openStore({ home, profile: "default", env: {} });
  try {
    const db = sqliteOnly(store, "hearth migrate --to")[internals].connection("writer").db;
    const specs = sqliteSpecs(db);
    let client: PgClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw fromPgError(err, url, "read the source");
    }
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      await assertVersion(client, url);
      await assertPgColumns(client, specs);
      // Rows hearth's own open may have written (meta) give way to the source's.
      db.pragma("foreign_keys = OFF");
      db.transaction(() => {
        for (const spec of specs) db.prepare(`DELETE FROM ${spec.name}`).run();
      })();
      const hashes: TableHashes = {};
      for (const [i, spec] of specs.entries()) {
        const hasher = new TableHasher(spec.columns);
        await streamPgRows(client, spec, chunk, (rows) => {
          for (const row of rows) hasher.add(row);
          db.transaction(() => insertRows(db, spec, rows))();
          failpoint("migrate-to.mid-copy");
        });
        hashes[spec.name] = hasher.digest();
        onProgress?.({
          op: "migrate",
          phase: spec.name,
          done: i + 1,
          total: specs.length,
          unit: "steps",
        });
      }
      await client.query("COMMIT");
      const broken = db.prepare("PRAGMA foreign_key_check").all();
      if (broken.length > 0)
        throw new HearthError(
          "HEARTH_MIGRATE_MISMATCH",
          `the source at ${maskUrl(url)} has ${broken.length} row(s) whose parent row is missing`,
          {
            resource: maskUrl(url),
            hint: "hearth doctor",
            details: { foreignKeys: broken.slice(0, 20) },
          },
        );
      db.pragma("wal_checkpoint(TRUNCATE)");
      return hashes;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw fromPgError(err, url, "copy the store into SQLite");
    } finally {
      client.release();
    }
  } finally {
    await store.close();
    await pool.end();
  }
}

async function assertVersion(client: PgClient, url: string): Promise<void> {
  const version = await readVersion(client, url);
  if (version === PG_LATEST_SCHEMA_VERSION) return;
  if (version === undefined)
    throw new HearthError(
      "HEARTH_FOREIGN_DATABASE",
      `${maskUrl(url)} holds no hearth store (no hearth_schema table)`,
      { resource: maskUrl(url), hint: "check --from / store.url" },
    );
  throw new HearthError(
    version > PG_LATEST_SCHEMA_VERSION ? "HEARTH_SCHEMA_TOO_NEW" : "HEARTH_SCHEMA_OUTDATED",
    `${maskUrl(url)} has schema version ${version}; this hearth copies version ${PG_LATEST_SCHEMA_VERSION}`,
    { resource: maskUrl(url), hint: "run the same hearth version that writes the database" },
  );
}

/** The staged store opened again (its own checks and migrations) and hashed in one read transaction. */
async function rehash(home: string): Promise<TableHashes> {
  const store = await openStore({ home, profile: "default", env: {} });
  try {
    const db = sqliteOnly(store, "hearth migrate --to")[internals].connection("writer").db;
    db.exec("BEGIN");
    try {
      return hashSqliteTables(db, sqliteSpecs(db));
    } finally {
      db.exec("COMMIT");
    }
  } finally {
    await store.close();
  }
}

/** Link the verified file to its name (never replacing a file that appeared meanwhile), then sync the directory. */
async function publish(staged: string, target: string): Promise<void> {
  for (const suffix of ["-wal", "-journal"]) {
    const side = `${staged}${suffix}`;
    if (existsSync(side) && lstatSync(side).size > 0)
      throw new HearthError(
        "HEARTH_INTERNAL",
        `internal: ${side} still holds data after the copy was closed`,
      );
  }
  const existing = existsSync(target) ? lstatSync(target) : undefined;
  if (existing?.isFile() && existing.size === 0) unlinkSync(target);
  try {
    linkSync(staged, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") refuseExisting(target);
    throw err;
  }
  unlinkSync(staged);
  const handle = await openFile(dirname(target), "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Staging homes of earlier runs whose process is gone. */
function removeDeadStaging(dir: string, target: string): void {
  const prefix = `.hearth-migrate-${basename(target)}-`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const pid = Number(name.slice(prefix.length, -4));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH")
        rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}

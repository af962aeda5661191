/**
 * SQLite -> PostgreSQL, losslessly and resumably. The SQLite source is read
 * in one read transaction: the copy is of one instant, however long it
 * takes and whoever writes meanwhile. Before the target is touched, every
 * source table is hashed (and a NUL in any text refused, naming its row).
 * Rows go in key order, in chunks, each chunk one target transaction that
 * also records, in the target's meta row PROGRESS_KEY, the source's
 * fingerprint (its hashes) and the last key copied: a copy killed at any
 * instant and run again resumes after the last committed chunk, without
 * duplicates. The end is proven, not assumed: counts and content hashes of
 * the target, read back in one snapshot, must equal the source's.
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { failpoint } from "../../failpoints.js";
import { assertNoForeignTables, migratePg, readVersion } from "../pg/migrate.js";
import { createPool, fromPgError, maskUrl, type PgClient, type PgPool } from "../pg/pool.js";
import { PG_LATEST_SCHEMA_VERSION } from "../pg/schema.js";
import type { OnProgress } from "../progress.js";
import { holdCopyLock } from "./lock.js";
import { assertPgColumns, hashPgTables, insertPgRows, pgWhere } from "./pg-side.js";
import { hashSqliteTables, readChunk, rowKey, sqliteSpecs } from "./sqlite-side.js";
import {
  IDENTITY_TABLES,
  mismatch,
  PROGRESS_KEY,
  type TableHashes,
  type TableSpec,
} from "./tables.js";

export interface CopyOptions {
  /** Empty a non-empty target (its hearth tables) and copy from scratch. */
  force?: boolean;
  /** Rows per chunk (one target transaction each); default 1000. */
  chunkRows?: number;
  /** Hash the source and judge the target (fresh, resume, refused); write nothing. */
  dryRun?: boolean;
  onProgress?: OnProgress;
  /** store.pg of the configuration: the target's schema, TLS, timeouts. */
  settings?: PgSettings;
}

export interface CopyTableReport {
  table: string;
  rows: number;
  sha256: string;
  /** Rows this run wrote (less than `rows` when it resumed an interrupted copy). */
  copied: number;
}

export interface CopyReport {
  source: string;
  target: string;
  resumed: boolean;
  /** True when --force emptied a non-empty target first. */
  emptiedTarget: boolean;
  tables: CopyTableReport[];
  rows: number;
  copied: number;
  durationMs: number;
  /** Rows written per second by this run (copy and verification included). */
  rowsPerSecond: number;
  /** True when counts and hashes were read back from the target and matched (false only for --dry-run). */
  verified: boolean;
  /** A dry run: `resumed` and `emptiedTarget` say what the real run would do; nothing was written. */
  dryRun: boolean;
}

interface Progress {
  source: string;
  fingerprint: string;
  startedAt: number;
  tables: Record<string, { after: string[] | null; done: boolean }>;
  parents: boolean;
}

export function fingerprint(hashes: TableHashes): string {
  return createHash("sha256").update(JSON.stringify(hashes)).digest("hex");
}

/** Copy the SQLite database behind `db` (a read-only connection) into the PostgreSQL database at `url`. */
export async function copySqliteToPg(
  db: Database.Database,
  sourcePath: string,
  url: string,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const started = Date.now();
  const chunk = options.chunkRows ?? 1000;
  db.exec("BEGIN");
  try {
    const specs = sqliteSpecs(db);
    const sourceHashes = hashSqliteTables(db, specs, { refuseNul: true });
    const print = fingerprint(sourceHashes);
    const pool = createPool(url, {
      max: 1,
      kind: "migrate",
      ...(options.settings ? { settings: options.settings } : {}),
    });
    try {
      if (options.dryRun) {
        const plan = await planOnly(pool, url, specs, sourcePath, print, options.force);
        return {
          source: sourcePath,
          target: maskUrl(url),
          ...plan,
          tables: specs.map((s) => ({ table: s.name, ...sourceHashes[s.name]!, copied: 0 })),
          rows: Object.values(sourceHashes).reduce((n, t) => n + t.rows, 0),
          copied: 0,
          durationMs: Date.now() - started,
          rowsPerSecond: 0,
          verified: false,
          dryRun: true,
        };
      }
      await migratePg(pool, url, { schema: options.settings?.schema });
      const client = await pool.connect().catch((err) => {
        throw fromPgError(err, url, "connect to the target");
      });
      try {
        const release = await holdCopyLock(client, url);
        try {
          await assertPgColumns(client, specs);
          const start = await startingPoint(client, url, specs, sourcePath, print, options.force);
          const copied = await copyTables(client, db, specs, start.progress, chunk, options);
          const targetHashes = await readHashes(client, specs);
          const bad = mismatch(sourceHashes, targetHashes, maskUrl(url));
          if (bad) throw bad;
          await client.query("DELETE FROM meta WHERE key = $1", [PROGRESS_KEY]);
          const rows = Object.values(sourceHashes).reduce((n, t) => n + t.rows, 0);
          const total = Object.values(copied).reduce((n, c) => n + c, 0);
          const durationMs = Date.now() - started;
          return {
            source: sourcePath,
            target: maskUrl(url),
            resumed: start.resumed,
            emptiedTarget: start.emptied,
            tables: specs.map((s) => ({
              table: s.name,
              ...sourceHashes[s.name]!,
              copied: copied[s.name] ?? 0,
            })),
            rows,
            copied: total,
            durationMs,
            rowsPerSecond: Math.round((total * 1000) / Math.max(1, durationMs)),
            verified: true,
            dryRun: false,
          };
        } finally {
          await release();
        }
      } catch (err) {
        throw fromPgError(err, url, "copy the store into PostgreSQL");
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  } finally {
    if (db.inTransaction) db.exec("COMMIT");
  }
}

/** What a real run would do with this target, read without writing (no schema is created). */
async function planOnly(
  pool: PgPool,
  url: string,
  specs: readonly TableSpec[],
  sourcePath: string,
  print: string,
  force: boolean | undefined,
): Promise<{ resumed: boolean; emptiedTarget: boolean }> {
  const client = await pool.connect().catch((err) => {
    throw fromPgError(err, url, "connect to the target");
  });
  try {
    const version = await readVersion(client, url);
    if (version === undefined) {
      // What the real run's migration would refuse, refused here too.
      await assertNoForeignTables(client, url);
      return { resumed: false, emptiedTarget: false };
    }
    if (version > PG_LATEST_SCHEMA_VERSION)
      throw new HearthError(
        "HEARTH_SCHEMA_TOO_NEW",
        `${maskUrl(url)} has schema version ${version}; this hearth knows up to ${PG_LATEST_SCHEMA_VERSION}`,
        { resource: maskUrl(url), hint: "upgrade hearth on this host" },
      );
    await assertPgColumns(client, specs);
    const judged = await judgeTarget(client, url, specs, sourcePath, print, force);
    return {
      resumed: judged.previous !== undefined && judged.resume,
      emptiedTarget: judged.nonEmpty && !judged.resume,
    };
  } catch (err) {
    throw fromPgError(err, url, "inspect the target");
  } finally {
    client.release();
  }
}

/** Resume, fresh, or refused: what the target holds decides (reads only). */
async function judgeTarget(
  client: PgClient,
  url: string,
  specs: readonly TableSpec[],
  sourcePath: string,
  print: string,
  force: boolean | undefined,
): Promise<{ previous: Progress | undefined; resume: boolean; nonEmpty: boolean }> {
  const found = await client.query("SELECT value FROM meta WHERE key = $1", [PROGRESS_KEY]);
  const previous = found.rows[0] ? (JSON.parse(found.rows[0].value) as Progress) : undefined;
  if (previous && previous.fingerprint === print && !force)
    return { previous, resume: true, nonEmpty: true };
  const occupied: string[] = [];
  for (const spec of specs) {
    const { rows } = await client.query(
      `SELECT EXISTS (SELECT 1 FROM ${spec.name} WHERE ${pgWhere(spec)}) AS any`,
    );
    if (rows[0]?.any) occupied.push(spec.name);
  }
  const nonEmpty = occupied.length > 0 || previous !== undefined;
  if (nonEmpty && !force) {
    const why = previous
      ? `it holds an interrupted copy of another source (or of ${previous.source} before it changed)`
      : `it already holds rows (${occupied.join(", ")})`;
    throw new HearthError(
      "HEARTH_TARGET_NOT_EMPTY",
      `refusing to copy ${sourcePath} into ${maskUrl(url)}: ${why}; nothing was written`,
      {
        resource: maskUrl(url),
        hint: "point --to at an empty database, or pass --force to empty its hearth tables and copy from scratch",
        details: { tables: occupied, interruptedCopy: previous?.source ?? null },
      },
    );
  }
  return { previous, resume: false, nonEmpty };
}

/** Fresh, resumed, or refused; a fresh start empties a forced target and writes the progress row. */
async function startingPoint(
  client: PgClient,
  url: string,
  specs: readonly TableSpec[],
  sourcePath: string,
  print: string,
  force: boolean | undefined,
): Promise<{ progress: Progress; resumed: boolean; emptied: boolean }> {
  const { previous, resume, nonEmpty } = await judgeTarget(
    client,
    url,
    specs,
    sourcePath,
    print,
    force,
  );
  if (resume && previous) return { progress: previous, resumed: true, emptied: false };
  const progress: Progress = {
    source: sourcePath,
    fingerprint: print,
    startedAt: Date.now(),
    tables: Object.fromEntries(specs.map((s) => [s.name, { after: null, done: false }])),
    parents: false,
  };
  await tx(client, async () => {
    // No CASCADE: a table hearth did not create that references these makes
    // the TRUNCATE fail (nothing changed) rather than lose its own rows.
    if (nonEmpty)
      await client.query(`TRUNCATE ${specs.map((s) => s.name).join(", ")} RESTART IDENTITY`);
    await client.query(
      "INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      [PROGRESS_KEY, JSON.stringify(progress), Date.now()],
    );
  });
  return { progress, resumed: false, emptied: nonEmpty };
}

async function copyTables(
  client: PgClient,
  db: Database.Database,
  specs: readonly TableSpec[],
  progress: Progress,
  chunk: number,
  options: CopyOptions,
): Promise<Record<string, number>> {
  const copied: Record<string, number> = {};
  const save = () =>
    client.query("UPDATE meta SET value = $2, updated_at = $3 WHERE key = $1", [
      PROGRESS_KEY,
      JSON.stringify(progress),
      Date.now(),
    ]);
  for (const [i, spec] of specs.entries()) {
    const state = progress.tables[spec.name]!;
    copied[spec.name] = 0;
    while (!state.done) {
      const rows = readChunk(db, spec, state.after ?? undefined, chunk);
      if (rows.length > 0) state.after = rowKey(spec, rows[rows.length - 1]!);
      if (rows.length < chunk) state.done = true;
      await tx(client, async () => {
        await insertPgRows(client, spec, rows, spec.name === "sessions" ? ["parent_id"] : []);
        await save();
      });
      copied[spec.name]! += rows.length;
      failpoint("migrate-to.mid-copy");
      options.onProgress?.({
        op: "migrate",
        phase: spec.name,
        done: i + (state.done ? 1 : 0),
        total: specs.length,
        unit: "steps",
      });
    }
    if (spec.name === "sessions" && !progress.parents) {
      // A parent may sort after its child: links are set once every session exists.
      const links = db
        .prepare("SELECT id, parent_id FROM sessions WHERE parent_id IS NOT NULL ORDER BY id")
        .all() as { id: string; parent_id: string }[];
      progress.parents = true;
      await tx(client, async () => {
        for (let at = 0; at < links.length; at += 5000) {
          const part = links.slice(at, at + 5000);
          await client.query(
            `UPDATE sessions SET parent_id = v.p FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS p) v WHERE sessions.id = v.id`,
            [part.map((l) => l.id), part.map((l) => l.parent_id)],
          );
        }
        await save();
      });
    }
  }
  for (const table of IDENTITY_TABLES) {
    // Copied ids were explicit: the identity's next value must come after them.
    await client.query(
      `SELECT setval(pg_get_serial_sequence('${table}', 'id'), COALESCE(max(id), 0) + 1, false) FROM ${table}`,
    );
  }
  return copied;
}

/** The target's hashes, in one read-only snapshot. */
export async function readHashes(
  client: PgClient,
  specs: readonly TableSpec[],
): Promise<TableHashes> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    const hashes = await hashPgTables(client, specs);
    await client.query("COMMIT");
    return hashes;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

async function tx(client: PgClient, fn: () => Promise<void>): Promise<void> {
  await client.query("BEGIN");
  try {
    await fn();
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

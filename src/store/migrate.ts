import type { Stats } from "node:fs";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { HEARTH_APPLICATION_ID } from "../files/inspect.js";
import { describeHolders, otherHolders } from "../process/holders.js";
import type { Connection } from "./connection.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from "./migrations.js";

export interface MigrateContext {
  /** Where the pre-migration backup goes. */
  backupsDir: string;
  profile: string;
  /** The database and sidecar files, for the holder check. */
  files: () => Map<string, Stats>;
  migrations?: readonly Migration[];
}

export interface MigrateResult {
  from: number;
  to: number;
  backup: string | null;
}

/**
 * Bring the schema up to date. A new, empty database is initialised in one
 * IMMEDIATE transaction (safe to race: the loser sees the version and stops).
 * Upgrading an existing schema is structural: it refuses while any other
 * process holds the database (naming them, failing closed when that cannot
 * be told), takes a backup first, and runs in one transaction.
 */
export function migrate(conn: Connection, ctx: MigrateContext): MigrateResult {
  const migrations = ctx.migrations ?? MIGRATIONS;
  const latest = migrations[migrations.length - 1]?.version ?? LATEST_SCHEMA_VERSION;
  const from = userVersion(conn);
  if (from > latest) throw schemaTooNew(conn.path, from, latest);
  if (from === latest) return { from, to: from, backup: null };

  let backup: string | null = null;
  if (from > 0) {
    const holders = otherHolders(ctx.files());
    if (holders.length > 0) {
      throw new HearthError(
        "HEARTH_STORE_HELD",
        `refusing to migrate ${conn.path} from schema ${from} to ${latest}: ${holders.length} other process(es) hold it\n${describeHolders(holders)}`,
        {
          resource: conn.path,
          hint: "stop them (hearth ps shows them), then start hearth again",
          details: { holders: holders.map((h) => ({ pid: h.pid, commandLine: h.commandLine })) },
        },
      );
    }
    backup = backupBeforeMigration(conn, ctx, from);
  }

  conn.transaction(() => {
    const current = userVersion(conn);
    if (current >= latest) return; // another process initialised it first
    if (current === 0) conn.db.pragma(`application_id = ${HEARTH_APPLICATION_ID}`);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      conn.db.exec(migration.sql);
      conn.db.pragma(`user_version = ${migration.version}`);
    }
  });
  return { from, to: latest, backup };
}

export function userVersion(conn: Connection): number {
  return Number(conn.db.pragma("user_version", { simple: true }));
}

export function schemaTooNew(path: string, version: number, latest: number): HearthError {
  return new HearthError(
    "HEARTH_SCHEMA_TOO_NEW",
    `refusing ${path}: its schema version ${version} was written by a newer hearth (this build knows up to ${latest}); hearth never downgrades a store`,
    { resource: path, hint: "upgrade hearth (npm install hearth@latest)" },
  );
}

function backupBeforeMigration(conn: Connection, ctx: MigrateContext, from: number): string {
  ensurePrivateDir(ctx.backupsDir);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const target = join(ctx.backupsDir, `${ctx.profile}-pre-migrate-v${from}-${stamp}.db`);
  conn.db.prepare("VACUUM INTO ?").run(target);
  chmodSync(target, 0o600);
  return target;
}

import { chmodSync } from "node:fs";
import { join } from "node:path";
import { HearthError } from "../../errors.js";
import { failpoint } from "../../failpoints.js";
import { ensurePrivateDir } from "../../files/create.js";
import { HEARTH_APPLICATION_ID } from "../../files/inspect.js";
import type { InodeLocks } from "../../process/inode-locks.js";
import { claimStructural } from "../../process/structural.js";
import type { Connection } from "./connection.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from "./migrations.js";

export interface MigrateContext {
  /** Where the pre-migration backup goes. */
  backupsDir: string;
  profile: string;
  /** This process's locks on the database: an upgrade takes the structural gate. */
  locks: InodeLocks;
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
  let gated = false;
  if (from > 0) {
    // Structural (P4): no other process may hold the database while its schema changes.
    claimStructural(ctx.locks, `migrate (schema ${from} to ${latest})`, {
      exclusiveFiles: true,
    });
    gated = true;
  }
  try {
    if (from > 0) backup = backupBeforeMigration(conn, ctx, from);
    runMigrations(conn, migrations, latest);
  } finally {
    if (gated) ctx.locks.endStructural();
  }
  return { from, to: latest, backup };
}

function runMigrations(conn: Connection, migrations: readonly Migration[], latest: number): void {
  conn.transaction(() => {
    const current = userVersion(conn);
    if (current >= latest) return; // another process initialised it first
    if (current === 0) conn.db.pragma(`application_id = ${HEARTH_APPLICATION_ID}`);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      conn.db.exec(migration.sql);
      failpoint("migrate.mid-migration");
      conn.db.pragma(`user_version = ${migration.version}`);
    }
  });
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

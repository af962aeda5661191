/**
 * `hearth backup` on a PostgreSQL store: pg_dump in its custom format (one
 * consistent snapshot of the database, taken while it is in use), with the
 * SQLite backup's rules. Admission is proportional to the database's size
 * and fails closed; the dump is written under the staging name
 * `.staging-<profile>-<pid>-<ms>.tmp` (outside the backup pattern),
 * verified (pg_restore --list reads it whole and it holds hearth_schema),
 * made 0600, renamed to `<profile>-<UTC stamp>.pgdump` and the directory
 * fsync'd; then only the newest `backup.keep` dumps of the profile are kept.
 */
import { chmodSync, statSync } from "node:fs";
import { join } from "node:path";
import { backupsDir } from "../../config/paths.js";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { ensurePrivateDir } from "../../files/create.js";
import { createPool, fromPgError, maskUrl } from "../../store/pg/pool.js";
import { wholeDatabase } from "../../store/pg/settings.js";
import type { OnProgress } from "../../store/progress.js";
import type { BackupResult } from "../backup.js";
import { backupFileName, listBackups } from "../backup-names.js";
import { phases } from "../phases.js";
import { keepNewest, publishStaged, removeDeadStaging } from "../publish.js";
import { assertSpaceFor } from "../space.js";
import { connection, findTool, runTool } from "./tools.js";

export interface PgBackupResult extends BackupResult {
  backend: "postgres";
  /** pg_dump's custom format (restore with hearth restore, or pg_restore). */
  format: "custom";
  /** Entries pg_restore --list read from the verified dump. */
  entries: number;
}

export async function backupPg(options: {
  home: string;
  profile: string;
  url: string;
  keep: number;
  /** store.pg: its TLS settings reach the size query and pg_dump. */
  settings?: PgSettings;
  dryRun?: boolean;
  now?: Date;
  onProgress?: OnProgress;
}): Promise<PgBackupResult> {
  const started = Date.now();
  const progress = phases("backup", ["dump", "verify", "publish"], options.onProgress);
  const pgDump = findTool("pg_dump");
  const pgRestore = findTool("pg_restore");
  const dir = backupsDir(options.home);
  const final = join(dir, backupFileName(options.profile, options.now ?? new Date(), ".pgdump"));
  const size = await databaseSize(options.url, options.settings);
  if (options.dryRun) {
    // A dry run writes nothing, a missing backups/ directory included.
    assertSpaceFor(dir, size, `back up ${maskUrl(options.url)}`);
    return result(final, size, 0, [], true, 0);
  }
  ensurePrivateDir(dir);
  removeDeadStaging(dir, options.profile);
  assertSpaceFor(dir, size, `back up ${maskUrl(options.url)}`);
  const { dbname, env } = connection(options.url, "backup", options.settings?.ssl);
  const entries = await publishStaged(
    dir,
    options.profile,
    final,
    async (staging) => {
      progress.start("dump");
      await runTool(
        pgDump,
        dumpArgs(staging, dbname),
        env,
        options.url,
        `back up ${maskUrl(options.url)}`,
      );
      chmodSync(staging, 0o600); // before the verify reads it, as publishStaged does after
      progress.start("verify");
      const count = await verifyDump(pgRestore, staging, env, options.url);
      progress.start("publish");
      return count;
    },
    "backup.mid-publish",
  );
  const removed = await keepNewest(
    dir,
    listBackups(dir, options.profile, ".pgdump").map((b) => b.path),
    options.keep,
  );
  progress.done();
  return result(final, statSync(final).size, Date.now() - started, removed, false, entries);
}

function result(
  path: string,
  bytes: number,
  durationMs: number,
  removed: string[],
  dryRun: boolean,
  entries: number,
): PgBackupResult {
  return {
    path,
    bytes,
    durationMs,
    removed,
    dryRun,
    backend: "postgres",
    format: "custom",
    entries,
  };
}

/** pg_dump's arguments for a custom-format dump of `dbname` into `file`. */
export function dumpArgs(file: string, dbname: string): string[] {
  return [
    "--format=custom",
    "--no-owner",
    "--no-privileges",
    `--file=${file}`,
    `--dbname=${dbname}`,
  ];
}

/** pg_restore reads the whole table of contents; a hearth dump names hearth_schema. Returns the entry count. */
export async function verifyDump(
  pgRestore: string,
  file: string,
  env: NodeJS.ProcessEnv,
  url: string,
): Promise<number> {
  let listing: string;
  try {
    listing = (await runTool(pgRestore, ["--list", file], env, url, `verify ${file}`)).stdout;
  } catch (err) {
    throw new HearthError("HEARTH_BACKUP_INVALID", `${file} is not a readable pg_dump archive`, {
      resource: file,
      cause: err,
      hint: "use a dump hearth backup wrote (<profile>-<stamp>.pgdump)",
    });
  }
  const entries = listing.split("\n").filter((l) => /^\d+;/.test(l));
  if (!entries.some((l) => / TABLE [^ ]+ hearth_schema /.test(l)))
    throw new HearthError(
      "HEARTH_BACKUP_INVALID",
      `${file} is a pg_dump archive without hearth_schema: not a hearth store`,
      { resource: file, hint: "use a dump hearth backup wrote (<profile>-<stamp>.pgdump)" },
    );
  return entries.length;
}

/** The database's size on the server (the dump is usually smaller). */
async function databaseSize(url: string, settings: PgSettings | undefined): Promise<number> {
  const whole = wholeDatabase(settings);
  const pool = createPool(url, { max: 1, kind: "backup", ...(whole ? { settings: whole } : {}) });
  try {
    const { rows } = await pool.query("SELECT pg_database_size(current_database())::text AS n");
    return Number(rows[0].n);
  } catch (err) {
    throw fromPgError(err, url, "read the database's size");
  } finally {
    await pool.end();
  }
}

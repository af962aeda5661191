/**
 * `hearth migrate --to <target>`: move a profile's store between backends.
 * To a postgres:// URL from the profile's SQLite store; to a SQLite path
 * (a file, or a home directory) from PostgreSQL (`from`, else store.url).
 * Every copy is verified (per-table counts and content hashes on both
 * sides) before it is reported; see src/store/copy/.
 */
import { extname, resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import { databasePath, resolveLocation } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { sqliteOnly } from "../store/api.js";
import type { CopyReport } from "../store/copy/to-pg.js";
import { openStore } from "../store/open.js";
import { hasPassword, storeUrlWithPassword, withPassword } from "../store/pg/password.js";
import { maskUrl, parseStoreUrl } from "../store/pg/url.js";
import type { OnProgress } from "../store/progress.js";
import { internals } from "../store/sqlite/store.js";

export interface MigrateToOptions {
  home?: string | undefined;
  profile?: string | undefined;
  /** postgres://… or a SQLite path (a `.db` file, or a hearth home). */
  to: string;
  /** The PostgreSQL source of a copy to SQLite (default: store.url). */
  from?: string | undefined;
  force?: boolean;
  /** To PostgreSQL only: hash the source and judge the target, write nothing. */
  dryRun?: boolean;
  chunkRows?: number;
  onProgress?: OnProgress;
  env?: NodeJS.ProcessEnv;
  /**
   * Asked for the PostgreSQL password (with the masked URL) when neither
   * the URL, PGPASSWORD nor store.passwordFile gives one: the CLI's prompt
   * on a terminal. An empty answer means none (trust, .pgpass).
   */
  askPassword?: (url: string) => Promise<string>;
}

export interface MigrateToReport extends CopyReport {
  direction: "sqlite-to-postgres" | "postgres-to-sqlite";
}

export function isPgUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

export async function migrateTo(options: MigrateToOptions): Promise<MigrateToReport> {
  const env = options.env ?? process.env;
  const where = resolveLocation(options, env);
  const config = loadConfig({ home: where.home, env });
  const sources = { passwordFile: config.store.passwordFile, home: where.home, env };
  const complete = async (url: string): Promise<string> => {
    parseStoreUrl(url);
    const filled = storeUrlWithPassword(url, sources);
    if (hasPassword(filled) || !options.askPassword) return filled;
    const answer = await options.askPassword(maskUrl(url));
    return answer === "" ? filled : withPassword(url, answer);
  };
  const from = options.from ?? config.store.url;
  if (from !== undefined) parseStoreUrl(from);

  if (isPgUrl(options.to)) {
    parseStoreUrl(options.to);
    if (options.from !== undefined)
      throw new HearthError(
        "HEARTH_USAGE",
        "--from names a PostgreSQL source, and --to is PostgreSQL too: PostgreSQL to PostgreSQL is pg_dump's work",
        {
          hint: "hearth migrate --to <path/to/state.db> --from postgres://… (or --to postgres://… from a SQLite profile)",
        },
      );
    const to = await complete(options.to);
    const { copySqliteToPg } = await import("../store/copy/to-pg.js");
    const store = await openStore({
      home: where.home,
      profile: where.profile,
      role: "reader",
      env,
    });
    try {
      const db = sqliteOnly(store, "hearth migrate --to")[internals].connection("reader").db;
      const report = await copySqliteToPg(db, store.path, to, {
        ...(options.force === undefined ? {} : { force: options.force }),
        ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
        ...(options.chunkRows === undefined ? {} : { chunkRows: options.chunkRows }),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        settings: config.store.pg,
      });
      return { direction: "sqlite-to-postgres", ...report };
    } finally {
      await store.close();
    }
  }

  if (from === undefined)
    throw new HearthError(
      "HEARTH_USAGE",
      `--to ${options.to} is a SQLite path, and this profile's store is SQLite already`,
      {
        hint: "copy a SQLite store with hearth backup; to copy from PostgreSQL, set store.url or pass --from postgres://…",
      },
    );
  if (options.dryRun)
    throw new HearthError(
      "HEARTH_USAGE",
      "--dry-run applies to a copy to PostgreSQL; a copy to SQLite writes only a new file, published once verified",
      { hint: "run it without --dry-run" },
    );
  const target =
    extname(options.to) === ".db"
      ? resolve(options.to)
      : databasePath(resolve(options.to), where.profile);
  const { copyPgToSqlite } = await import("../store/copy/to-sqlite.js");
  const report = await copyPgToSqlite(await complete(from), target, {
    settings: config.store.pg,
    ...(options.chunkRows === undefined ? {} : { chunkRows: options.chunkRows }),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  return { direction: "postgres-to-sqlite", ...report };
}

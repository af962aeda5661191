/**
 * openStore(): resolve home, profile and configuration, then open the
 * profile's store on the backend the configuration names (a postgres:// URL:
 * PostgreSQL; else the SQLite file under the home). Nothing above this line
 * knows which backend runs.
 */

import { loadConfigLazily } from "../config/load-lazily.js";
import { resolveLocation } from "../config/paths.js";
import type { HearthConfigInput } from "../config/schema.js";
import { HearthError } from "../errors.js";
import type { Store } from "./api.js";
import { markMisuse } from "./args.js";
import type { Logger } from "./logger.js";
import { openSqliteStore } from "./sqlite/open.js";
import { withOneMapsRead } from "./sqlite/removed-index.js";
import type { ConnectionRole } from "./types.js";

export interface OpenStoreOptions {
  /** Defaults to $HEARTH_HOME, then ~/.hearth. */
  home?: string;
  /** Defaults to $HEARTH_PROFILE, then "default". */
  profile?: string;
  /** "writer" (default) may write; "reader" uses a read-only connection only and never creates files. */
  role?: ConnectionRole;
  /**
   * `false`: a writer too refuses with HEARTH_STORE_NOT_FOUND, creating
   * nothing, when the profile has no SQLite store yet (maintenance and
   * tools that act on an existing store, so a mistyped profile name is an
   * error, not a new empty store). Default `true` for a writer; a reader
   * never creates. A PostgreSQL database is the store: it is used either way.
   */
  create?: boolean;
  /** Highest-precedence configuration (above config.json and HEARTH_* variables). */
  config?: HearthConfigInput;
  /** Receives the loud, once-only warnings about configuration that could not be applied. */
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * Run large reads (search, export, whole-transcript loads) on reader
   * threads, each with its own read-only connection, so they never hold
   * this thread's event loop: a count, or `true` for `store.readerThreads`
   * from the configuration. Default: none (the long-lived processes,
   * gateway and dashboard, turn them on).
   */
  readerThreads?: number | boolean;
  /**
   * A postgres:// URL: open the store in that PostgreSQL database (above
   * store.url in the configuration and HEARTH_STORE_URL). readerThreads
   * does not apply there.
   */
  url?: string;
  /**
   * Your own `pg.Pool` (from the `pg` package) for a PostgreSQL store: the
   * store runs every query on it, leaves its settings (size, TLS, session
   * settings) as you made them and never ends it: close() leaves it open.
   * `url` (or store.url) still names the database in messages; without
   * one, the pool's host and database do.
   */
  pool?: PgPoolLike;
}

/** What openStore() needs of a caller's pg.Pool (pass the pg.Pool itself). */
export interface PgPoolLike {
  connect(): Promise<unknown>;
  query(...args: never[]): Promise<unknown>;
  end(): Promise<void>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  readonly options?: unknown;
}

/**
 * Open (creating if needed) the state store of one profile.
 *
 * ```ts
 * const store = await openStore({ profile: "default" });
 * const session = await store.sessions.create({ source: "cli", title: "Plans" });
 * await store.messages.append(session.id, { role: "user", content: "hello" });
 * await store.close();
 * ```
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  try {
    return await open(options);
  } catch (err) {
    throw markMisuse(err);
  }
}

async function open(options: OpenStoreOptions): Promise<Store> {
  const env = options.env ?? process.env;
  const role = options.role ?? "writer";
  if (role !== "writer" && role !== "reader") {
    throw new TypeError(`options.role must be "writer" or "reader", got ${JSON.stringify(role)}`);
  }
  if (options.create !== undefined && typeof options.create !== "boolean")
    throw new TypeError(`options.create must be a boolean, got ${JSON.stringify(options.create)}`);
  const { home, profile } = resolveLocation(options, env);
  const config = await loadConfigLazily({
    home,
    env,
    ...(options.config ? { overrides: options.config } : {}),
  });
  const pool = options.pool;
  if (pool !== undefined && (typeof pool !== "object" || typeof pool?.connect !== "function"))
    throw new TypeError("options.pool must be a pg.Pool");
  const url = options.url ?? config.store.url ?? (pool ? poolUrl(pool) : undefined);
  if (url !== undefined) {
    if (typeof url !== "string")
      throw new TypeError("options.url must be a postgres:// URL string");
    // The PostgreSQL driver loads only for a PostgreSQL store.
    const { openPgStore } = await loadPgBackend();
    return openPgStore({
      url,
      home,
      profile,
      role,
      config,
      env,
      // A pg.Pool (checked structurally above); the backend holds its real type.
      ...(pool ? { pool: pool as never } : {}),
    });
  }
  return openSqliteStore({
    home,
    profile,
    role,
    create: options.create !== false,
    config,
    logger: options.logger,
    readerThreads: options.readerThreads,
  });
}

/** A URL naming a caller's pool's database (no password), for messages. */
function poolUrl(pool: PgPoolLike): string {
  const o = (pool.options ?? {}) as Record<string, unknown>;
  if (typeof o.connectionString === "string") return o.connectionString;
  const host = typeof o.host === "string" && !o.host.startsWith("/") ? o.host : "localhost";
  const user = typeof o.user === "string" ? `${encodeURIComponent(o.user)}@` : "";
  const port = o.port === undefined ? "" : `:${String(o.port)}`;
  const database = typeof o.database === "string" ? o.database : "postgres";
  return `postgres://${user}${host}${port}/${encodeURIComponent(database)}`;
}

/**
 * The PostgreSQL backend, or HEARTH_PG_DRIVER_MISSING when its driver (`pg`)
 * is not installed: the library-only package (hearth-store) lists `pg` as an
 * optional peer, so a SQLite user never installs it.
 */
async function loadPgBackend(): Promise<typeof import("./pg/open.js")> {
  try {
    return await import("./pg/open.js");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      /['"]pg['"]/.test(String((err as Error).message))
    )
      throw new HearthError(
        "HEARTH_PG_DRIVER_MISSING",
        "a PostgreSQL store (store.url) needs the pg driver, which is not installed",
        {
          resource: "pg",
          hint: "npm install pg (hearth-store lists it as an optional peer)",
          cause: err,
        },
      );
    throw err;
  }
}

/**
 * Run `opens`, a process's start opening its stores one after another (the
 * gateway over its profiles), as one batch: on SQLite their first-open
 * checks share one reading of /proc/self/maps instead of one each, which
 * grows with every store opened (src/store/sqlite/removed-index.ts,
 * withOneMapsRead, for what the shared reading trusts). Other backends: runs
 * `opens` as it is.
 */
export function openStoresTogether<T>(opens: () => Promise<T>): Promise<T> {
  return withOneMapsRead(opens);
}

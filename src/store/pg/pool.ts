/**
 * Connections to PostgreSQL: one `pg` pool per store. Every connection
 * names itself in `application_name` (kind, pid, host), so that the PG side
 * of "refuse and name who holds it" reads pg_stat_activity, and every error
 * the driver raises becomes a HearthError with a stable code (pg-errors.ts).
 */
import { hostname } from "node:os";
import pg from "pg";
import type { PgSettings } from "../../config/pg.js";
import { processKind } from "../../process/kind.js";
import { connectionEnded, fromPgError, isRetryable, onlyReads } from "./pg-errors.js";
import { poolSettings, sessionSetup } from "./settings.js";
import { parseStoreUrl } from "./url.js";

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

export interface PgPoolOptions {
  /** Connections in the pool (default: store.pg.pool.max, else 8). */
  max?: number;
  /** Kind in application_name (default: this process's kind). */
  kind?: string;
  /** store.pg from the configuration: pool, statement timeout, TLS, schema. */
  settings?: PgSettings;
  /** Every connection runs with default_transaction_read_only (a reader's store). */
  readOnly?: boolean;
}

export { fromPgError, TOO_MANY_CONNECTIONS_HINT } from "./pg-errors.js";
export { maskUrl, parseStoreUrl, urlPasswords } from "./url.js";

/** `hearth:<kind>:<pid>@<host>`, cut to PostgreSQL's 63 bytes. */
export function applicationName(kind: string = processKind()): string {
  return `hearth:${kind}:${process.pid}@${hostname()}`.slice(0, 63);
}

/** A pool on `url`; connections are made lazily, errors are coded. */
export function createPool(url: string, options: PgPoolOptions = {}): PgPool {
  parseStoreUrl(url);
  const sized = poolSettings(url, options.settings);
  const pool = new pg.Pool({
    connectionString: url,
    ...sized,
    max: options.max ?? sized.max,
    application_name: applicationName(options.kind),
    connectionTimeoutMillis: 10_000,
  });
  // An idle connection cut by the server (restart, admin shutdown) is
  // dropped by the pool; the next query opens a fresh one.
  pool.on("error", () => {});
  const setup = sessionSetup(options.settings, options.readOnly === true);
  // A connection cut while checked out (inside a transaction, between two
  // statements) emits 'error' on its client: without a listener that is an
  // uncaught exception. The next statement on it fails instead, coded.
  // The pool emits 'connect' before it hands the connection out, so the
  // session setup is the first statement on it.
  pool.on("connect", (client) => {
    client.on("error", () => {});
    if (setup) client.query(setup).catch(() => {});
  });
  return pool;
}

/**
 * How many times a transaction whose connection was lost before its COMMIT
 * was sent runs again, each time on another connection.
 */
const LOST_CONNECTION_RETRIES = 2;

/**
 * Run `fn` in one transaction on a pooled connection (READ COMMITTED unless
 * `isolation` says otherwise). A serialization failure or deadlock retries
 * the whole transaction (up to `retries` times): `fn` must be safe to run
 * again, which it is when all it does is SQL on `client`.
 *
 * A connection lost before the COMMIT was sent (the server restarted or
 * ended the backend, the network cut it) retries it too, on another
 * connection, up to LOST_CONNECTION_RETRIES times: the server never saw a
 * COMMIT, so nothing of it can have committed. "Lost": the error says the
 * connection ended (connectionEnded), and the ROLLBACK failed too, so the
 * connection is gone, not merely the statement. Once the COMMIT is sent, a loss is reported and never retried:
 * the transaction may have committed (HEARTH_PG_UNAVAILABLE).
 */
export async function transaction<T>(
  pool: PgPool,
  url: string,
  doing: string,
  fn: (client: PgClient) => Promise<T>,
  options: { isolation?: "serializable" | "repeatable read"; retries?: number } = {},
): Promise<T> {
  const retries = options.retries ?? 5;
  let lost = 0;
  for (let attempt = 0; ; attempt++) {
    let client: PgClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw fromPgError(err, url, doing);
    }
    let broken = false;
    let committing = false;
    try {
      await client.query(
        options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : "BEGIN",
      );
      const result = await fn(client);
      committing = true;
      await client.query("COMMIT");
      return result;
    } catch (err) {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true;
      }
      if (isRetryable(err) && attempt < retries) continue;
      if (broken && !committing && lost < LOST_CONNECTION_RETRIES && connectionEnded(err)) {
        lost++;
        continue;
      }
      throw fromPgError(err, url, doing);
    } finally {
      client.release(broken);
    }
  }
}

/**
 * What every PostgreSQL store module holds: the pool, the URL (for coded
 * errors), the profile its rows belong to, and the two ways it talks to
 * the server.
 */
export interface PgDb {
  readonly pool: PgPool;
  readonly url: string;
  readonly profile: string;
  /**
   * One query on any pooled connection, errors coded. A query that only
   * reads (onlyReads) runs again, on another connection, when the server or
   * the network ended its connection under it; any other is reported.
   */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    doing: string,
    sql: string | PreparedSql,
    params?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /**
   * query() with each row as an array of its columns in select order: pg
   * builds no object per row (a 200-message tail: ~10% less client CPU).
   */
  queryArrays(doing: string, text: string, params?: unknown[]): Promise<unknown[][]>;
  /**
   * One write statement in its own implicit transaction (no BEGIN or
   * COMMIT round trips), retried as a transaction is; refused on a reader
   * store as a transaction is. For a write that one statement holds whole:
   * an UPDATE takes its row's lock and re-checks its WHERE on the row's
   * latest version, so a condition in the WHERE is decided under that lock.
   */
  statement<R extends pg.QueryResultRow = pg.QueryResultRow>(
    doing: string,
    sql: string | PreparedSql,
    params?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** One transaction (retried on serialization failure or deadlock), errors coded. */
  transaction<T>(
    doing: string,
    fn: (client: PgClient) => Promise<T>,
    options?: { isolation?: "serializable" | "repeatable read"; retries?: number },
  ): Promise<T>;
}

/**
 * A statement each connection prepares once under `name`: the server
 * parses and plans it at its first run there, then binds and executes it,
 * where plain text is parsed, analysed and planned again at every call.
 * For the statements every turn runs (workload 18: the server's CPU per
 * message). One name must always mean one text in a process, and its
 * result must name its columns, never `*`: a migration adding a column
 * would change the shape of a plan the server holds ("cached plan must not
 * change result type").
 */
export interface PreparedSql {
  readonly name: string;
  readonly text: string;
}

/** A read cut by a lost connection runs again on another connection, this many times. */
const LOST_READ_RETRIES = 2;

/**
 * `run` (one statement on a pooled connection), run again when its
 * connection ended under it and the statement only reads: a read has no
 * effect to repeat. Checked on the error path only.
 */
async function read<T>(
  url: string,
  doing: string,
  text: string,
  run: () => Promise<T>,
): Promise<T> {
  for (let lost = 0; ; lost++) {
    try {
      return await run();
    } catch (err) {
      if (lost < LOST_READ_RETRIES && connectionEnded(err) && onlyReads(text)) continue;
      throw fromPgError(err, url, doing);
    }
  }
}

export function pgDb(pool: PgPool, url: string, profile: string): PgDb {
  return {
    pool,
    url,
    profile,
    query: (doing, sql, params) =>
      typeof sql === "string"
        ? read(url, doing, sql, () => pool.query(sql, params))
        : read(url, doing, sql.text, () =>
            pool.query({ name: sql.name, text: sql.text, values: params }),
          ),
    queryArrays: (doing, text, params) =>
      read(
        url,
        doing,
        text,
        async () => (await pool.query<unknown[]>({ text, values: params, rowMode: "array" })).rows,
      ),
    async statement(doing, sql, params) {
      for (let attempt = 0; ; attempt++) {
        try {
          return typeof sql === "string"
            ? await pool.query(sql, params)
            : await pool.query({ name: sql.name, text: sql.text, values: params });
        } catch (err) {
          if (isRetryable(err) && attempt < 5) continue;
          throw fromPgError(err, url, doing);
        }
      }
    },
    transaction: (doing, fn, options) => transaction(pool, url, doing, fn, options),
  };
}

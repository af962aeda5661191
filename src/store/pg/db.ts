/**
 * The PgDb a PgStore hands its modules: the shared pool's PgDb, plus what a
 * store adds around every call: close() waits for the calls in flight and
 * refuses later ones (HEARTH_STORE_CLOSED), and a reader store refuses
 * every write transaction (HEARTH_READ_ONLY) before it begins. The server
 * backs the reader rule too: a reader's connections run with
 * default_transaction_read_only, and SQLSTATE 25006 is HEARTH_READ_ONLY.
 */
import { HearthError, isHearthError } from "../../errors.js";
import { storeClosed } from "../api.js";
import type { ConnectionRole } from "../types.js";
import { maskUrl, type PgDb } from "./pool.js";

export interface StoreDb extends PgDb {
  /** Refuse new calls; resolves once every call in flight has finished. */
  stop(): Promise<void>;
  readonly stopped: boolean;
}

export function storeDb(db: PgDb, role: ConnectionRole): StoreDb {
  let count = 0;
  let stopped = false;
  const idle: (() => void)[] = [];
  const resource = maskUrl(db.url);
  const enter = () => {
    if (stopped) throw storeClosed(resource);
    count++;
  };
  const leave = () => {
    if (--count > 0) return;
    for (const wake of idle.splice(0)) wake();
  };
  const readOnly = (err: unknown) => unwrapMisuse(readOnlyOr(err));
  /** One call counted in flight, its errors made this store's. */
  const guarded = async <T>(call: () => Promise<T>): Promise<T> => {
    enter();
    try {
      return await call();
    } catch (err) {
      throw readOnly(err);
    } finally {
      leave();
    }
  };
  const readOnlyOr = (err: unknown) =>
    (isHearthError(err) &&
      (err.details as { sqlstate?: unknown } | undefined)?.sqlstate === "25006") ||
    (err as { code?: unknown }).code === "25006"
      ? readOnlyError(resource)
      : err;
  return {
    pool: db.pool,
    url: db.url,
    profile: db.profile,
    get stopped() {
      return stopped;
    },
    query: (doing, sql, params) => guarded(() => db.query(doing, sql, params)),
    queryArrays: (doing, text, params) => guarded(() => db.queryArrays(doing, text, params)),
    async statement(doing, text, params) {
      if (role !== "writer") throw readOnlyError(resource);
      return guarded(() => db.statement(doing, text, params));
    },
    async transaction(doing, fn, options) {
      if (role !== "writer") throw readOnlyError(resource);
      return guarded(() => db.transaction(doing, fn, options));
    },
    stop() {
      stopped = true;
      if (count === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}

/** API misuse found inside a transaction (a TypeError, a RangeError) reaches the caller as itself. */
function unwrapMisuse(err: unknown): unknown {
  const cause = isHearthError(err, "HEARTH_POSTGRES") ? err.cause : undefined;
  return cause instanceof TypeError || cause instanceof RangeError ? cause : err;
}

function readOnlyError(resource: string): HearthError {
  return new HearthError("HEARTH_READ_ONLY", `this store of ${resource} was opened read-only`, {
    resource,
    hint: 'open it with openStore({ role: "writer" })',
  });
}

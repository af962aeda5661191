import { HearthError } from "../../errors.js";
import type { ConnectionRole } from "../types.js";
import type { Connection, Statement } from "./connection.js";
import type { DatabaseEntry } from "./registry.js";
import { type WriteOptions, writeTransaction } from "./write-path.js";

/**
 * A probe's statements: Connection.probeStmt() on the connection probe()
 * chose (a resting connection stays at rest for them), or, in a reader
 * thread, its connection's own stmt().
 */
export interface Prober {
  stmt(sql: string): Statement;
}

/** What the store's parts need: a connection for reads, one for writes, a clock. */
export interface Access {
  readonly profile: string;
  readonly path: string;
  /** The read-only connection (C1): reads never run on the writer. */
  read(): Connection;
  /**
   * For the small reads a gateway runs on every profile it serves, at
   * start and on timers (is a handoff running, a session idle, which
   * handoffs are pending, the newest health sample): the read-only
   * connection when it is open, else, in a writer store whose reads have
   * not begun, the writer's, outside any transaction and without the write
   * lock (reads in WAL mode take no lock another process waits on). An
   * idle profile then never opens its read-only connection (2 descriptors
   * and ~280 KiB each; docs/benchmarks-history.md).
   */
  probe(): Prober;
  /** The shared writer connection; throws HEARTH_READ_ONLY for reader stores. */
  write(): Connection;
  /**
   * The store's write path: run `fn` in one IMMEDIATE transaction on the
   * writer connection it is given (the one current at that instant, so a
   * reopen() in between never hands it a closed one), after waiting (never
   * blocking the event loop) for this process's turn at the fair write lock.
   * An aborted `signal` ends the wait with HEARTH_ABORTED; nothing is written.
   * `options.searchIndex` false: `fn` changes no table the search index covers.
   */
  writeTransaction<T>(
    fn: (conn: Connection) => T,
    signal?: AbortSignal,
    options?: WriteOptions,
  ): Promise<T>;
  now(): number;
}

/** A SQLite store's Access, plus the connection lookup its own members use. */
export interface StoreAccess extends Access {
  /** The connection of `role` this store uses now; refuses on a closed or detached store. */
  connection(role: ConnectionRole): Connection;
}

/**
 * The Access of one SqliteStore on its registry entry. Every lookup first
 * asks `assertOpen` (a closed store refuses); a reader store refuses writes
 * with HEARTH_READ_ONLY. The write path is the fair cross-process write lock
 * (waited for asynchronously, bounded by `busyTimeoutMs`), then one
 * IMMEDIATE transaction: a foreign writer (not hearth) holding SQLite's own
 * lock is waited out with async retries too, never with SQLite's sleeping
 * busy handler.
 */
export function storeAccess(o: {
  entry: DatabaseEntry;
  profile: string;
  path: string;
  role: ConnectionRole;
  busyTimeoutMs: number;
  assertOpen: () => void;
}): StoreAccess {
  const { entry, path } = o;
  const connection = (role: ConnectionRole): Connection => {
    o.assertOpen();
    const conn = entry.connection(role) ?? entry.openLazily(role);
    if (!conn && !entry.hasSlot(role)) {
      throw new HearthError("HEARTH_INTERNAL", `internal: no ${role} connection for ${path}`);
    }
    if (!conn) {
      // A reopen() failed part-way: the files this store used are gone and no new ones were attached.
      throw new HearthError(
        "HEARTH_GENERATION_CHANGED",
        `the store of ${path} is detached from its files: the last reopen() failed`,
        {
          resource: path,
          hint: "call store.reopen() again once the files are back, or close it and open a new store",
        },
      );
    }
    return conn;
  };
  const write = (): Connection => {
    if (o.role !== "writer") {
      throw new HearthError("HEARTH_READ_ONLY", `this store of ${path} was opened read-only`, {
        resource: path,
        hint: 'open it with openStore({ role: "writer" })',
      });
    }
    return connection("writer");
  };
  return {
    profile: o.profile,
    path,
    connection,
    read: () => connection("reader"),
    probe: () => {
      let conn: Connection;
      if (o.role !== "writer" || entry.connection("reader")) conn = connection("reader");
      else {
        const writer = connection("writer");
        // Never inside a transaction the writer has open: it would read uncommitted rows.
        conn = writer.transactionOpen ? connection("reader") : writer;
      }
      return { stmt: (sql) => conn.probeStmt(sql) };
    },
    write,
    writeTransaction: (fn, signal, options) => {
      write();
      return writeTransaction(
        entry,
        () => connection("writer"),
        fn,
        o.busyTimeoutMs,
        signal,
        options,
      );
    },
    now: () => Date.now(),
  };
}

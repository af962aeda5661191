import type { Holder } from "../../process/holders.js";
import type { StructuralOptions } from "../../process/structural.js";
import { fromSqliteError } from "../../sqlite-errors.js";
import type { Connection } from "./connection.js";
import type { SqliteStore } from "./store.js";
import { walCheckpoint } from "./wal-sync/wal-checkpoint.js";

/** What a structural operation may do while it holds the gate exclusively. */
export interface StructuralContext {
  readonly path: string;
  readonly profile: string;
  /** Hearth readers that stay attached (only pure readers may, and none with exclusiveFiles). */
  readonly readers: readonly Holder[];
  /** Merge the full-text index's segments (FTS5 optimize). */
  optimizeSearchIndex(): void;
  /**
   * Refresh the query planner's statistics (ANALYZE), keeping sqlite_stat1
   * and dropping sqlite_stat4's samples: with samples, SQLite plans every
   * `column = ?` on an indexed column for the value bound, so each call
   * re-prepares its statement (a 5-row tail read took 2-3x as long).
   */
  analyze(): void;
  /** Rewrite the database compactly (VACUUM). */
  vacuum(): void;
  /**
   * Checkpoint the WAL into the database and truncate it. "busy": a reader
   * still uses it (nothing waited for); "no-wal": the store is not in WAL mode.
   */
  truncateWal(): "done" | "busy" | "no-wal";
}

/** The structural operations on the writer connection, each behind the generation guard. */
export function structuralOperations(
  conn: Connection,
): Pick<StructuralContext, "optimizeSearchIndex" | "analyze" | "vacuum" | "truncateWal"> {
  const exec = (sql: string) => {
    conn.guard?.check();
    try {
      conn.db.exec(sql);
    } catch (err) {
      throw fromSqliteError(err, conn.path);
    }
  };
  return {
    optimizeSearchIndex: () => exec("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')"),
    analyze: () => {
      // One transaction, so no other connection loads the samples in between.
      const stat4 = hasStat4(conn);
      conn.guard?.check();
      try {
        conn.db.transaction(() => {
          conn.db.exec("ANALYZE");
          if (stat4) conn.db.exec("DELETE FROM sqlite_stat4");
        })();
      } catch (err) {
        throw fromSqliteError(err, conn.path);
      }
      // This connection loaded the samples at the end of ANALYZE: reload.
      exec("ANALYZE sqlite_schema");
    },
    vacuum: () => exec("VACUUM"),
    truncateWal: () => {
      conn.guard?.check();
      const row = walCheckpoint(conn.db, "TRUNCATE");
      // A checkpoint that could not start (another checkpointer) reads (1, -1, -1); outside WAL mode (0, -1, -1).
      if (row.busy !== 0) return "busy";
      return row.log < 0 ? "no-wal" : "done";
    },
  };
}

/**
 * Whether this SQLite keeps sqlite_stat4 samples (built with STAT4, as
 * better-sqlite3 is): ANALYZE creates the table there and nowhere else.
 */
function hasStat4(conn: Connection): boolean {
  return conn.db.prepare("SELECT sqlite_compileoption_used('ENABLE_STAT4')").pluck().get() === 1;
}

/** The structural gate as a function: `withStructuralGate(store, "optimize", (ctx) => ctx.exec("VACUUM"))`. */
export function withStructuralGate<T>(
  store: SqliteStore,
  op: string,
  fn: (ctx: StructuralContext) => T | Promise<T>,
  options?: StructuralOptions,
): Promise<T> {
  return store.withStructuralGate(op, fn, options);
}

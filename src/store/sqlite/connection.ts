import Database from "better-sqlite3";
import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { failpoint } from "../../failpoints.js";
import type { FileGuard } from "../../files/guard.js";
import { fromSqliteError, isSqliteError } from "../../sqlite-errors.js";
import {
  checkpointModeFor,
  type WalCheckpointRow,
  walCheckpoint,
} from "./wal-sync/wal-checkpoint.js";

export type Statement = Database.Statement<unknown[], unknown>;

/** A transaction's generation check leans on the last commit's for no longer than this (FileGuard.checkUnlessWithin). */
const GUARD_LEAN_MAX_MS = 1;

import type { ConnectionRole } from "../types.js";

export type SynchronousLevel = "off" | "normal" | "full" | "extra";

/** The settings an off-loop commit changes, as SQL values. */
interface PragmaState {
  synchronous: string;
  autocheckpoint: number;
  sizeLimit: number;
}

/** A switch of the off-loop settings threw half-way: what is in force is not known. */
const UNKNOWN = Symbol("unknown settings");

/**
 * How a write-path commit runs beside a WalSync: "loop" keeps SQLite's own
 * fsync in the commit and leaves only the checkpoint to the WalSync; "pool"
 * leaves the fsync to it as well.
 */
export type OffLoopMode = "loop" | "pool";

/** A resting connection's page cache, in pages: below 3, SQLite takes no block of pages up front. */
const REST_CACHE_PAGES = 2;

/** SQLite's numeric `PRAGMA synchronous` value as its name. */
export function synchronousName(value: unknown): SynchronousLevel | string {
  return (["off", "normal", "full", "extra"] as const)[Number(value)] ?? String(value);
}

/**
 * One better-sqlite3 connection with its statement cache. `uses` counts every
 * statement handed out, so tests can prove which connection served a call
 * (C1: read methods never touch the writer).
 */
export class Connection {
  /** The driver handle, used as is only by the write path (transaction()). */
  private readonly handle: Database.Database;
  readonly role: ConnectionRole;
  readonly path: string;
  /** The synchronous level of this connection, as SQLite reports it after hearth set it (C2). */
  readonly synchronous: SynchronousLevel | string;
  uses = 0;
  /** Of `uses`, the probes' (probeStmt()): the quiet sweep does not count them as use. */
  probes = 0;
  /** Write transactions begun on this connection (tests count them: a probe must begin none). */
  transactions = 0;
  private readonly statements = new Map<string, Statement>();
  private readonly begin: Statement | undefined;
  private readonly commit: Statement | undefined;
  private readonly rollback: Statement | undefined;
  guard: FileGuard | undefined;
  /** Set on the writer when its commits may leave fsync and checkpoint to a WalSync (see allowOffLoop). */
  private offLoopPragmas: Record<OffLoopMode, PragmaState> | undefined;
  /** The configured values of the settings an off-loop commit changes (set by allowOffLoop). */
  private configured: PragmaState | undefined;
  private readonly busyTimeoutMs: number;
  /** How long the last COMMIT statement took (ms): SQLite's own fsync included, when it ran one. */
  lastCommitMs = 0;
  /** How long the last transaction took from its generation check to its commit (ms). */
  private lastTxnMs = 0;
  /**
   * The off-loop pragmas this connection runs with now (undefined: the
   * configured behaviour). Left in place after an off-loop commit, so a run
   * of commits in one mode pays for the switch once; every other use of
   * the connection (a statement outside transaction(), a pragma, a
   * checkpoint, close, the driver handle) puts the configured behaviour
   * back first (settle()).
   */
  private applied: PragmaState | typeof UNKNOWN | undefined;
  /** True while transaction() runs: statements then belong to it and settle() leaves the pragmas be. */
  private inTransaction = false;
  /** Resting (rest()): the page cache given back, its size to restore at the next use. */
  private restingFrom: number | undefined;

  constructor(path: string, role: ConnectionRole, config: HearthConfig) {
    this.path = path;
    this.role = role;
    let opened: Database.Database | undefined;
    try {
      this.handle = opened = new Database(path, {
        readonly: role === "reader",
        fileMustExist: true,
      });
      this.busyTimeoutMs = config.store.busyTimeoutMs;
      this.handle.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      // Explicit on every connection: the level never depends on the build's default (C2).
      this.handle.pragma(`synchronous = ${config.durability.synchronous.toUpperCase()}`);
      // Read back, never echoed: the level that matters is the one SQLite runs.
      this.synchronous = synchronousName(this.handle.pragma("synchronous", { simple: true }));
      if (role === "writer") {
        this.handle.pragma("foreign_keys = ON");
        this.handle.pragma(`journal_size_limit = ${config.durability.journalSizeLimitBytes}`);
        this.handle.pragma(`wal_autocheckpoint = ${config.durability.walAutocheckpointPages}`);
        this.begin = this.handle.prepare("BEGIN IMMEDIATE");
        this.commit = this.handle.prepare("COMMIT");
        this.rollback = this.handle.prepare("ROLLBACK");
      }
    } catch (err) {
      // Nothing else holds a connection whose setup failed: close it here, or
      // its descriptors and its -shm mapping stay with the process (a damaged
      // schema fails the first pragma that reads it).
      try {
        opened?.close();
      } catch {
        // the error to report is the setup's
      }
      throw fromSqliteError(err, path, "open");
    }
  }

  /**
   * @internal The driver handle, with the configured behaviour in place
   * (kept out of the public .d.ts, which must not need @types/better-sqlite3).
   */
  get db(): Database.Database {
    if (this.restingFrom !== undefined) this.wake();
    this.settle();
    return this.handle;
  }

  /**
   * @internal Give back the page cache of a connection nobody is using (a
   * store just opened, one quiet for a while: quiet-connections.ts).
   * SQLite's page cache takes its first 20 pages in one block (~88 KB,
   * every page of it written at once) whenever an empty cache reads, and
   * keeps what it read until the connection closes: a gateway serving 200
   * quiet profiles held ~17 MB that way. At rest the cache is 2 pages,
   * below the size at which SQLite takes that block, emptied
   * (shrink_memory frees the block), then holding the one page read back.
   * The next use puts the configured size back first (one pragma); the
   * cache, never empty, fills again page by page as it reads. Nothing about
   * the data changes. Not inside a transaction, nor while one of its
   * statements is being iterated.
   */
  rest(): void {
    if (this.restingFrom !== undefined || this.inTransaction || this.handle.inTransaction) return;
    // Nor while a statement of it is still being iterated (its read is not over).
    for (const statement of this.statements.values()) if (statement.busy) return;
    // Marked first: a pragma that throws leaves a connection the next use wakes.
    this.restingFrom = Number(this.handle.pragma("cache_size", { simple: true }));
    this.handle.pragma(`cache_size = ${REST_CACHE_PAGES}`);
    this.handle.pragma("shrink_memory");
    // Then one page read back into the emptied cache: SQLite takes its block
    // whenever an empty cache reads at full size, so a cache woken empty
    // would take it again at its first read.
    this.handle.pragma("schema_version");
  }

  /** True while the connection rests (rest()). */
  get resting(): boolean {
    return this.restingFrom !== undefined;
  }

  private wake(): void {
    const size = this.restingFrom;
    this.restingFrom = undefined;
    this.handle.pragma(`cache_size = ${size}`);
  }

  /**
   * Put the configured behaviour back (synchronous level, automatic
   * checkpoint, WAL size limit) when an off-loop commit left its pragmas in
   * place, unless a transaction() is running.
   */
  private settle(): void {
    if (this.applied === undefined || this.inTransaction) return;
    this.switchTo(undefined);
  }

  /**
   * Change the off-loop settings from the ones applied now to `target`
   * (undefined: the configured ones), running only the pragmas whose value
   * differs: a switch between "loop" and "pool" is one pragma (synchronous),
   * not the way back to the configured settings and out again (five).
   * Marked unknown while it runs: a switch that threw half-way leaves the
   * connection to be set whole (all three settings) before its next use.
   */
  private switchTo(target: PragmaState | undefined): void {
    const from = this.applied === UNKNOWN ? undefined : (this.applied ?? this.configured);
    const to = target ?? this.configured;
    if (!to) return;
    const sql: string[] = [];
    if (from?.synchronous !== to.synchronous) sql.push(`PRAGMA synchronous = ${to.synchronous}`);
    if (from?.autocheckpoint !== to.autocheckpoint) {
      sql.push(`PRAGMA wal_autocheckpoint = ${to.autocheckpoint}`);
    }
    if (from?.sizeLimit !== to.sizeLimit) sql.push(`PRAGMA journal_size_limit = ${to.sizeLimit}`);
    if (sql.length > 0) {
      this.applied = UNKNOWN;
      this.handle.exec(sql.join("; "));
    }
    this.applied = target;
  }

  /**
   * @internal Let `transaction(fn, mode)` commit without SQLite's automatic
   * checkpoint or its cut of a grown WAL ("loop"), and with `fsync` true also without any fsync of
   * SQLite's own ("pool": synchronous OFF for that transaction only, which
   * also skips the WAL-header fsync when the commit starts the WAL over;
   * hearth's fsync after the commit covers both). The caller must then run
   * WalSync.afterCommit() before acknowledging (src/store/sqlite/wal-sync). Every
   * other transaction and statement keeps the configured behaviour.
   */
  allowOffLoop(fsync: boolean, config: HearthConfig): void {
    const synchronous = config.durability.synchronous.toUpperCase();
    // Neither a checkpoint nor the cut of a grown WAL back to
    // journal_size_limit: SQLite cuts it in the first commit that starts the
    // WAL over after a checkpoint copied all of it, and the WalSync's thread
    // may copy all of it between two commits. Its checkpoint cuts instead.
    // SQL run with exec(), never as statements prepared once: SQLite applies
    // a pragma when it compiles it, so a prepared one's first run repeated
    // what its preparation had already done (the first off-loop commit ran
    // with SQLite's automatic checkpoint on); only later runs recompiled it.
    this.configured = {
      synchronous,
      autocheckpoint: config.durability.walAutocheckpointPages,
      sizeLimit: config.durability.journalSizeLimitBytes,
    };
    const loop: PragmaState = { synchronous, autocheckpoint: 0, sizeLimit: -1 };
    this.offLoopPragmas = { loop, pool: fsync ? { ...loop, synchronous: "OFF" } : loop };
  }

  /**
   * @internal A checkpoint on this connection, on the caller's thread: the
   * WalSync's fallback when its thread's checkpoint is overdue. PASSIVE, or
   * TRUNCATE without waiting when the WAL file is past `truncateAbove` (the
   * off-loop commits never cut it: allowOffLoop).
   */
  checkpointHere(truncateAbove: number): { ok: true } & WalCheckpointRow {
    try {
      const mode = checkpointModeFor(this.path, truncateAbove);
      if (mode === "PASSIVE") return { ok: true, ...walCheckpoint(this.db, mode) };
      this.db.pragma("busy_timeout = 0");
      try {
        return { ok: true, ...walCheckpoint(this.db, mode) };
      } finally {
        this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      }
    } catch (err) {
      throw fromSqliteError(err, this.path);
    }
  }

  /** True when transaction(fn, mode) can commit off the loop (allowOffLoop was called). */
  get offLoop(): boolean {
    return this.offLoopPragmas !== undefined;
  }

  /** @internal The SQL of the prepared statements this connection keeps (each holds SQLite memory). */
  get cachedStatements(): string[] {
    return [...this.statements.keys()];
  }

  /** @internal A cached prepared statement. */
  stmt(sql: string): Statement {
    if (this.restingFrom !== undefined) this.wake();
    return this.cached(sql);
  }

  /**
   * @internal A cached prepared statement for a probe (Access.probe(): the
   * small timed reads of a gateway's every profile, a handoff poll every
   * 5 s). A resting connection stays at rest: the probe's few pages go
   * through its 2-page cache, and the quiet sweep does not count it as use.
   */
  probeStmt(sql: string): Statement {
    this.probes++;
    return this.cached(sql);
  }

  private cached(sql: string): Statement {
    this.uses++;
    this.settle();
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.handle.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** True while a transaction is open on this connection (asked without waking it). */
  get transactionOpen(): boolean {
    return this.handle.inTransaction;
  }

  /**
   * Read a setting of this connection (`synchronous`, `busy_timeout`): it
   * touches no database page and takes no lock, so it is not counted as a use.
   */
  setting(
    name: "synchronous" | "busy_timeout" | "journal_size_limit" | "wal_autocheckpoint",
  ): unknown {
    return this.db.pragma(name, { simple: true });
  }

  /** Read a pragma's single value, counted like a statement. */
  pragma(name: string): unknown {
    this.uses++;
    try {
      return this.db.pragma(name, { simple: true });
    } catch (err) {
      throw fromSqliteError(err, this.path);
    }
  }

  /**
   * Run `fn` in one IMMEDIATE transaction. The generation guard runs before
   * (refuse to write to a ghost; skipped when the check after the last
   * commit is younger than that transaction took, see
   * FileGuard.checkUnlessWithin) and after commit (never acknowledge a
   * write that went to one). With a `mode` (and allowOffLoop called), the commit
   * leaves its checkpoint, and with "pool" its fsync, to the caller's WalSync.
   */
  transaction<T>(fn: () => T, mode?: OffLoopMode): T {
    if (!this.begin || !this.commit || !this.rollback) {
      throw new TypeError("transaction() needs the writer connection");
    }
    const started = performance.now();
    if (this.restingFrom !== undefined) this.wake();
    this.guard?.checkUnlessWithin(Math.min(this.lastTxnMs, GUARD_LEAN_MAX_MS));
    const pragmas = mode ? this.offLoopPragmas?.[mode] : undefined;
    if (this.applied !== pragmas) this.switchTo(pragmas);
    this.inTransaction = true;
    try {
      return this.commitOrRollback(fn, started);
    } finally {
      this.inTransaction = false;
    }
  }

  /** `started`: when transaction() began, before its generation check. */
  private commitOrRollback<T>(fn: () => T, started: number): T {
    // transaction() checked that the writer's statements exist.
    const [begin, commit, rollback] = [this.begin!, this.commit!, this.rollback!];
    this.transactions++;
    try {
      begin.run();
    } catch (err) {
      const error = fromSqliteError(err, this.path);
      if (error.code !== "HEARTH_BUSY") throw error;
      // Nothing was written: the caller may retry (see Store's write path).
      throw new HearthError("HEARTH_BUSY", error.message, {
        resource: this.path,
        cause: err,
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        details: { phase: "begin" },
      });
    }
    let result: T;
    try {
      result = fn();
      failpoint("write.before-commit");
      const committing = performance.now();
      commit.run();
      const ended = performance.now();
      this.lastCommitMs = ended - committing;
      this.lastTxnMs = ended - started;
    } catch (err) {
      if (this.handle.inTransaction) rollback.run();
      throw isSqliteError(err) ? fromSqliteError(err, this.path) : err;
    }
    this.guard?.check();
    failpoint("write.after-commit");
    return result;
  }

  close(): void {
    this.statements.clear();
    this.restingFrom = undefined; // closing needs no cache back
    this.db.close();
  }
}

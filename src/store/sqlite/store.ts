import { profileDir } from "../../config/paths.js";
import type { HearthConfig } from "../../config/schema.js";
import { type HearthError, isHearthError } from "../../errors.js";
import { type HolderReport, readHolders, settling } from "../../process/holders.js";
import { type InodeLocks, inodeLocks } from "../../process/inode-locks.js";
import { claimStructural, type StructuralOptions } from "../../process/structural.js";
import { type Store, type StoreLocation, type StoreParts, storeClosed } from "../api.js";
import { codedErrors, codedGenerator, codeError, type Door } from "../coded-errors.js";
import { type ExportOptions, exportSessions } from "../export.js";
import type { OnProgress } from "../progress.js";
import { redactorFor } from "../redaction.js";
import { searchMessages } from "../search.js";
import { storeParts } from "../store-parts.js";
import type {
  ConnectionRole,
  DurabilityReport,
  SearchHit,
  SearchOptions,
  StoreCounts,
} from "../types.js";
import { type StoreAccess, storeAccess } from "./access.js";
import { SqliteAudit } from "./audit.js";
import { SqliteBrowse } from "./browse.js";
import { SqliteBrowserLogins } from "./browser-logins.js";
import { watchCommits } from "./commit-watch.js";
import type { Connection } from "./connection.js";
import { offLoopCommits, readDurability } from "./durability.js";
import { SqliteGraphCheckpoints } from "./graph-checkpoints.js";
import { SqliteHandoffs } from "./handoffs.js";
import { SqliteHosts } from "./hosts.js";
import { SqliteImports } from "./imports.js";
import { InFlight, uncountedDoor } from "./in-flight.js";
import { quickCheck, readSchema } from "./inspect.js";
import { SqliteJsonTail } from "./json-tail.js";
import { SqliteMessages } from "./messages.js";
import { SqliteMeta } from "./meta.js";
import { copyOnline } from "./online-backup.js";
import { type Offload, OffloadedMessages, offload } from "./reader-pool/offload.js";
import type { DatabaseEntry } from "./registry.js";
import { SqliteRuns } from "./runs.js";
import { SqliteSessions } from "./sessions.js";
import { SqliteStats } from "./stats.js";
import { type StructuralContext, structuralOperations } from "./structural-context.js";
import { SqliteTokens } from "./tokens.js";
import { SqliteToolPermissions } from "./tool-permissions.js";
import { type WalLength, walLength } from "./wal-sync/wal-length.js";

/** Test-only window into which connection served which call (C1). */
export const internals = Symbol("hearth.internals");
/** This process's lock locks for the store's database (the gateway lock uses it). */
export { inodeLocks };

export interface StoreInit {
  home: string;
  profile: string;
  path: string;
  role: ConnectionRole;
  config: HearthConfig;
  entry: DatabaseEntry;
  warnings: string[];
  /** Re-runs the path checks and reattaches the entry to the current files. */
  reattach: () => Promise<void>;
  /** Reader threads for large reads (search, export, whole transcripts); 0: none. */
  readerThreads: number;
}

/**
 * One profile's state store in a SQLite file: the Store interface (api.ts)
 * plus the file-level members only a database file has (path on disk, kernel
 * locks, structural gate, online copy, maintenance windows, reattaching).
 */
// The members of StoreLocation and StoreParts are declared once, in api.ts,
// for every backend; the constructor assigns every one of them.
export interface SqliteStore extends StoreLocation, StoreParts {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: its interface above is assigned in the constructor
export class SqliteStore implements Store {
  readonly backend = "sqlite" as const;
  private readonly entry: DatabaseEntry;
  private readonly reattach: () => Promise<void>;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The calls of this store in flight: close() waits for them. */
  private readonly calls = new InFlight();
  private readonly access: StoreAccess;
  /** Every call passes it (maintenance windows park the process behind it). */
  private readonly door: Door;
  /** Where the large reads run: reader threads, or this thread. */
  private readonly large: Offload;

  constructor(init: StoreInit) {
    const location: StoreLocation = {
      home: init.home,
      profile: init.profile,
      path: init.path,
      role: init.role,
      config: init.config,
      warnings: init.warnings,
    };
    Object.assign(this, location);
    this.entry = init.entry;
    this.reattach = init.reattach;
    this.door = this.calls.door(
      this.entry,
      () => this.config.maintenance.maxParkMs,
      () => this.closedError(),
    );
    this.access = storeAccess({
      entry: this.entry,
      profile: this.profile,
      path: this.path,
      role: this.role,
      busyTimeoutMs: this.config.store.busyTimeoutMs,
      assertOpen: () => this.assertOpen(),
    });
    const pool =
      init.readerThreads > 0
        ? init.entry.readers(init.config, init.profile, init.readerThreads)
        : undefined;
    this.large = offload(this.access, pool);
    const parts = storeParts(
      {
        sessions: new SqliteSessions(this.access),
        messages: pool ? new OffloadedMessages(this.access, pool) : new SqliteMessages(this.access),
        meta: new SqliteMeta(this.access),
        handoffs: new SqliteHandoffs(this.access, (wakes) =>
          watchCommits(() => this.entry.guard, this.config.gateway.handoffPollMs, wakes),
        ),
        tokens: new SqliteTokens(this.access),
        browserLogins: new SqliteBrowserLogins(this.access),
        hosts: new SqliteHosts(),
        browse: new SqliteBrowse(this.access),
        runs: new SqliteRuns(this.access),
        stats: new SqliteStats(this.access),
        graphCheckpoints: new SqliteGraphCheckpoints(this.access),
        jsonTail: new SqliteJsonTail(this.access),
        audit: new SqliteAudit(this.access),
        toolPermissions: new SqliteToolPermissions(this.access),
        imports: new SqliteImports(this.access),
      },
      // Every call passes the door; every error is coded.
      (_, part) => codedErrors(part, this.path, this.door),
      redactorFor(this.config, this.profile),
    );
    Object.assign(this, parts);
  }

  /** Full-text search over message content. Any text is searched literally; it never throws on syntax. */
  async search(text: string, options?: SearchOptions): Promise<SearchHit[]> {
    await this.door.enter();
    try {
      return await searchMessages(this.large, text, options);
    } catch (err) {
      throw codeError(err, this.path);
    } finally {
      this.door.leave();
    }
  }

  /** Stream sessions as JSONL or Markdown chunks. */
  export(options: ExportOptions): AsyncGenerator<string> {
    // Not counted for close(): a reader may abandon an export half-read.
    const door = uncountedDoor(this.entry, this.config.maintenance.maxParkMs);
    return codedGenerator(
      () => exportSessions(options, (o, cursor) => this.large.exportStep(o, cursor)),
      this.path,
      door,
    );
  }

  counts(): Promise<StoreCounts> {
    return this.messages.counts();
  }

  /** Configured versus actual durability settings of this connection. */
  async durability(): Promise<DurabilityReport> {
    return this.through(async () => {
      const writer = this.role === "writer" ? this.access.connection("writer") : undefined;
      return readDurability(this.access.read(), writer, this.config, this.path, this.entry);
    });
  }

  /**
   * `durability().offLoop.commits` alone, from memory: for a caller that
   * reads it often (the gateway's /metrics), without reading SQLite or the
   * filesystem and without disturbing the writer's settings between commits.
   */
  offLoopCommits(): DurabilityReport["offLoop"]["commits"] {
    this.assertOpen();
    const writer = this.role === "writer" ? this.entry.connection("writer") : undefined;
    return offLoopCommits(writer, this.entry.walSync);
  }

  /**
   * fsyncs of the WAL for this process's write-path commits since its
   * writer opened (FsyncPolicy.walFsyncs), from memory; 0 when its commits
   * leave no fsync to hearth (no WalSync, or not at FULL). With
   * offLoopCommits(): how many commits shared one fsync.
   */
  walFsyncs(): number {
    this.assertOpen();
    const writer = this.role === "writer" ? this.entry.connection("writer") : undefined;
    return writer?.offLoop ? (this.entry.walSync?.policy?.walFsyncs ?? 0) : 0;
  }

  /** Schema version and application_id as stored in the database. */
  async schema(): Promise<{ version: number; applicationId: number }> {
    return this.through(async () => readSchema(this.access.read()));
  }

  /** SQLite's quick_check, on the read-only connection. */
  async quickCheck(): Promise<{ ok: boolean; problems: string[] }> {
    return this.through(async () => quickCheck(this.access.read()));
  }

  /**
   * Write a consistent, fsync'd, verified copy of the database to `target`
   * (which must not exist): SQLite's online backup in paced steps on a worker
   * thread while writers keep committing. HEARTH_BACKUP_INVALID if the copy
   * fails verification.
   */
  async copyTo(target: string, onProgress?: OnProgress): Promise<void> {
    return this.through(async () => {
      this.assertOpen();
      await copyOnline(this.path, target, {
        busyTimeoutMs: this.config.store.busyTimeoutMs,
        nice: this.config.backup.nice,
        profileDir: profileDir(this.home, this.profile),
        ...(onProgress ? { onProgress } : {}),
      });
    });
  }

  /**
   * Who holds this store's database right now, from the kernel (P5). A lock
   * no process explains is read again in new censuses before it is reported
   * (a holder starting or exiting), with the pauses awaited.
   */
  async holders(): Promise<HolderReport> {
    this.assertOpen();
    return settling(() => readHolders(this.path));
  }

  /**
   * Run a structural operation (P4): VACUUM, checkpoint TRUNCATE, FTS
   * rebuild, repair, anything that rewrites the file. Takes the structural
   * gate exclusively without waiting; refuses with HEARTH_STORE_HELD (CLI
   * exit 3), naming every holder and changing nothing, while any other
   * writer lives (or, with `exclusiveFiles`, any other process at all), and
   * with HEARTH_HOLDERS_UNKNOWN when holders cannot be told. This process's
   * own writes wait until `fn` is done; writers in other processes that
   * start meanwhile wait up to store.gateWaitMs.
   */
  async withStructuralGate<T>(
    op: string,
    fn: (ctx: StructuralContext) => T | Promise<T>,
    options: StructuralOptions = {},
  ): Promise<T> {
    const conn = this.access.write();
    const locks = this.entry.locks;
    return locks.writeLock.exclusive(async () => {
      await this.entry.walSync?.quiet(); // no checkpoint pass of ours (they skip the write lock) beside fn
      const readers = claimStructural(locks, op, options);
      try {
        return await fn({
          path: this.path,
          profile: this.profile,
          readers,
          ...structuralOperations(conn),
        });
      } finally {
        locks.endStructural();
      }
    }, this.config.store.busyTimeoutMs);
  }

  /**
   * Reattach to the current files after HEARTH_GENERATION_CHANGED. The ghost
   * connection is closed without checkpointing its WAL into the database.
   */
  async reopen(): Promise<void> {
    this.assertOpen();
    await this.reattach();
  }

  /**
   * True when the files this store uses were unlinked or replaced under it
   * (F3), or a reopen() failed part-way: what reopen() repairs. Cheap (one
   * fstat or readlink per file); changes nothing.
   */
  async generationChanged(): Promise<boolean> {
    this.assertOpen();
    const conn = this.entry.connection(this.role);
    if (!conn) return true;
    try {
      conn.guard?.check();
      return false;
    } catch (err) {
      if (isHearthError(err, "HEARTH_GENERATION_CHANGED")) return true;
      throw err;
    }
  }

  /**
   * Park this process's use of the database for a maintenance window (M5):
   * new calls (of every store of this process on it) wait at the door,
   * calls in flight finish (up to maintenance.maxParkMs, else
   * HEARTH_STORE_HELD and nothing changed), then the connections close and
   * the kernel locks are given back, but the gateway lock. `hearth ps` shows
   * the process as "parked". resume() ends it.
   */
  async park(): Promise<void> {
    this.assertOpen();
    await this.entry.park(this.config.maintenance.maxParkMs);
  }

  /**
   * End a window: take the locks back (waiting while the structural
   * operation still holds the gate), reopen on the files as they are now,
   * and let the waiting calls in. On failure the process stays parked.
   */
  async resume(): Promise<void> {
    this.assertOpen();
    await this.entry.unpark(this.config);
  }

  get isParked(): boolean {
    return this.entry.isParked;
  }

  /** Calls made before close() finish first; later ones get HEARTH_STORE_CLOSED. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.calls.stop().then(async () => {
      // A checkpoint this process started finishes before its connections close.
      await this.entry.walSync?.settled();
      this.closed = true;
      // Presence first: the registry closes the lock descriptors with the last connection.
      this.entry.locks.leaveReader();
      if (this.role === "writer") this.entry.locks.leaveWriter();
      this.entry.release("reader");
      if (this.role === "writer") this.entry.release("writer");
      // The last store of the database stopped the reader threads: their
      // connections end before close() resolves.
      await this.entry.threadsClosed;
    });
    return this.closing;
  }

  /** `await using store = await openStore()` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** True from the moment close() is called. */
  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  /** Run `fn` through the door: it waits while the process is parked, and a park waits for it. */
  private async through<T>(fn: () => Promise<T>): Promise<T> {
    await this.door.enter();
    try {
      return await fn();
    } finally {
      this.door.leave();
    }
  }

  /** @internal */
  get [inodeLocks](): InodeLocks {
    this.assertOpen();
    return this.entry.locks;
  }

  /** @internal */
  get [walLength](): WalLength {
    this.assertOpen();
    return this.entry.walLength;
  }

  /** @internal */
  get [internals](): {
    uses: (role: ConnectionRole) => number;
    /** The SQL of the statements the role's connection keeps (none while it is not open; opens nothing). */
    cached: (role: ConnectionRole) => string[];
    connection: (role: ConnectionRole) => Connection;
  } {
    return {
      uses: (role) => this.entry.connection(role)?.uses ?? 0,
      cached: (role) => this.entry.connection(role)?.cachedStatements ?? [],
      connection: (role) => this.access.connection(role),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): HearthError {
    return storeClosed(this.path);
  }
}

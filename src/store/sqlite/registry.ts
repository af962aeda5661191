import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { FileGuard } from "../../files/guard.js";
import { inodeKey, lstatOrNull, stillInode } from "../../files/inspect.js";
import { InodeLocks } from "../../process/inode-locks.js";
import type { ConnectionRole } from "../types.js";
import { Connection } from "./connection.js";
import { MergeDebt } from "./fts-merge.js";
import { assertSameGeneration } from "./generation.js";
import { type GhostFiles, type GhostOutcome, GhostWalKeeper } from "./ghost-wal.js";
import { ParkDoor } from "./park-door.js";
import { unwatchQuiet, watchQuiet } from "./quiet-connections.js";
import { ReaderPool } from "./reader-pool/pool.js";
import { assertNoRemovedIndex, rememberIndex } from "./removed-index.js";
import { type WalSync, walSyncFor } from "./wal-sync/sync.js";
import { WalLength } from "./wal-sync/wal-length.js";

/**
 * One role's connection and its references. `lazy`: a reader slot whose
 * connection opens on the first read (openLazily), set up by `setup`.
 */
interface Slot {
  conn: Connection | undefined;
  refs: number;
  lazy?: { config: HearthConfig; setup: (conn: Connection) => void } | undefined;
}

/**
 * The per-process registry of connections, keyed by database inode (C1).
 *
 * At most one read-write connection per database exists in a process, shared
 * by every store opened on it; read-only work uses a separate read-only
 * connection, also shared. The entry owns the file guard (F2/F3), whose
 * descriptors stay open until the last connection to the inode has closed.
 */
export class DatabaseEntry {
  key: string;
  readonly path: string;
  walMode = false;
  guard: FileGuard | undefined;
  /** Presence, gate and write locks of this process on the inode. */
  readonly locks: InodeLocks;
  /** A slot with refs but no connection is one whose reopen failed: its stores see HEARTH_GENERATION_CHANGED until a reopen succeeds. */
  private readonly slots: Record<ConnectionRole, Slot | undefined> = {
    writer: undefined,
    reader: undefined,
  };

  /** Saves what a removed WAL holds before reopen() and before the writer closes. */
  private readonly ghosts = new GhostWalKeeper();
  /** A reopen() under way: concurrent callers share it. */
  private reopening: Promise<GhostOutcome> | undefined;

  /** fsync and checkpoints of the writer's commits, off the event loop (undefined: SQLite does both in the commit). */
  walSync: WalSync | undefined;

  /** The WAL's length after this process's commits, for whoever watches it (wal-length.ts). */
  readonly walLength = new WalLength();

  /** Search-index merge work this process's writes owe (src/store/sqlite/fts-merge.ts). */
  readonly searchMerges = new MergeDebt();

  /** Reader threads for large reads, when a store of this process asked for them. */
  private pool: ReaderPool | undefined;

  constructor(key: string, path: string) {
    this.key = key;
    this.path = path;
    this.locks = new InodeLocks(path, key);
  }

  /** The reader threads of this database in this process (started on demand, shared by its stores). */
  readers(config: HearthConfig, profile: string, size: number): ReaderPool {
    if (!this.pool) {
      this.pool = new ReaderPool({ path: this.path, profile, config, size, key: () => this.key });
    }
    this.pool.grow(size);
    return this.pool;
  }

  connection(role: ConnectionRole): Connection | undefined {
    return this.slots[role]?.conn;
  }

  // Maintenance windows (M5): the door every store call passes.
  private readonly door = new ParkDoor(() => this.path);

  /** See ParkDoor.enter(). */
  enter(maxWaitMs: number): Promise<void> | undefined {
    return this.door.enter(maxWaitMs);
  }

  leave(): void {
    this.door.leave();
  }

  get isParked(): boolean {
    return this.door.isShut;
  }

  /**
   * Park for a maintenance window: new calls wait at the door, calls in
   * flight finish (up to `maxWaitMs`, else the park is refused and nothing
   * changed), then every connection closes and the kernel locks are given
   * back but the gateway lock (the process shows as "parked").
   */
  async park(maxWaitMs: number): Promise<void> {
    if (!(await this.door.shut(maxWaitMs))) return;
    await this.walSync?.settled();
    // What only a removed WAL holds is saved first, as before a reopen (F3,
    // docs/durability.md); when that is not safe, HEARTH_GENERATION_LOST
    // refuses the window with nothing else changed.
    try {
      this.ghosts.beforeReopen(this.removedGeneration());
    } catch (err) {
      this.door.open();
      throw err;
    }
    await this.pool?.close();
    for (const role of ["writer", "reader"] as const) {
      const slot = this.slots[role];
      const conn = slot?.conn;
      if (!slot || !conn) continue;
      slot.conn = undefined;
      this.closeConnection(conn);
    }
    this.locks.suspend();
  }

  /**
   * Leave the window: take the gate and presence back (waiting while the
   * structural operation still runs), reopen the connections on the files
   * as they are now (a restore or repair may have replaced the database:
   * the entry then moves to the new inode), and let the waiting calls in.
   * On failure it stays parked; call it again.
   */
  async unpark(config: HearthConfig): Promise<void> {
    if (!this.door.isShut) return;
    const stats = lstatOrNull(this.path);
    if (!stats || !stats.isFile()) {
      throw new HearthError("HEARTH_STORE_NOT_FOUND", `${this.path} is gone after maintenance`, {
        resource: this.path,
      });
    }
    const key = inodeKey(stats);
    await this.locks.resume(config.store.gateWaitMs, key);
    if (key !== this.key) {
      if (entries.get(this.key) === this) entries.delete(this.key);
      this.key = key;
      entries.set(key, this);
    }
    for (const role of ["writer", "reader"] as const) {
      const slot = this.slots[role];
      if (slot && !slot.conn && !slot.lazy) this.acquire(role, config, undefined, true);
    }
    this.pool?.reopen();
    this.door.open();
  }

  /** A store of this process holds `role` (its connection may be detached after a failed reopen). */
  hasSlot(role: ConnectionRole): boolean {
    return this.slots[role] !== undefined;
  }

  /**
   * Take a reference on the read-only connection without opening it: a
   * writer store's reads open it on first use (openLazily). A gateway
   * serving 200 profiles held 200 read-only connections that idle profiles
   * never read through: 2 descriptors (database, -wal) and ~280 KiB each.
   */
  reserveReader(config: HearthConfig, setup: (conn: Connection) => void): void {
    const slot = this.slots.reader;
    if (slot) {
      slot.refs++;
      return;
    }
    this.slots.reader = { conn: undefined, refs: 1, lazy: { config, setup } };
  }

  /**
   * Open a reserved connection on its first use; undefined when `role` has
   * none reserved. It must open the files the process already holds: the
   * database inode of the entry and the sidecars the guard watches, else
   * HEARTH_GENERATION_CHANGED and nothing stays open (F3).
   */
  openLazily(role: ConnectionRole): Connection | undefined {
    const slot = this.slots[role];
    if (!slot?.lazy || slot.conn || this.door.isShut) return undefined;
    const { config, setup } = slot.lazy;
    const conn = this.acquire(role, config, setup, true);
    try {
      assertSameGeneration(this.path, this.key);
      this.guard?.check();
    } catch (err) {
      slot.conn = undefined;
      this.closeConnection(conn);
      throw err;
    }
    return conn;
  }

  /**
   * Take a reference on the connection for `role`, opening it when needed.
   * `setup` runs on a new connection before the guard is taken (journal
   * mode, migrations). `reattach` (unpark, reopen) opens the connection of a
   * slot whose references are already counted; any other call is a new
   * reference, also when the slot's connection is closed for a window (a
   * store opened while another of this process is parked).
   */
  acquire(
    role: ConnectionRole,
    config: HearthConfig,
    setup?: (conn: Connection) => void,
    reattach = false,
  ): Connection {
    const slot = this.slots[role];
    if (slot?.conn) {
      slot.refs++;
      return slot.conn;
    }
    const conn = new Connection(this.path, role, config);
    try {
      setup?.(conn);
      // The first read makes SQLite create -wal and -shm before the guard opens them.
      conn.stmt("SELECT count(*) FROM sqlite_schema").get();
      if (!this.guard) {
        this.walMode =
          String(conn.db.pragma("journal_mode", { simple: true })).toLowerCase() === "wal";
        // The guard borrows the kernel locks' descriptor on the database (open until retire()).
        this.guard = new FileGuard(this.path, this.walMode, this.locks.readable());
        if (this.walMode)
          rememberIndex(this.key, this.guard.identity("-shm"), this.locks.readable());
      }
      // In WAL mode BEGIN IMMEDIATE never waits inside SQLite: the store's
      // write path waits asynchronously instead (rollback journals still need
      // SQLite's wait at COMMIT for readers to finish).
      if (role === "writer" && this.walMode) conn.db.pragma("busy_timeout = 0");
      if (role === "writer")
        this.walSync = this.walMode ? walSyncFor(this, conn, config) : undefined;
    } catch (err) {
      conn.close();
      if (!this.connected) this.closeGuard();
      throw err;
    }
    conn.guard = this.guard;
    if (!slot) this.slots[role] = { conn, refs: 1 };
    else {
      slot.conn = conn;
      slot.lazy = undefined;
      if (!reattach) slot.refs++;
    }
    return conn;
  }

  release(role: ConnectionRole): void {
    const slot = this.slots[role];
    if (!slot) return;
    if (--slot.refs > 0) return;
    // The writer closing on a removed generation saves what only that WAL
    // holds first, when that is safe (src/store/sqlite/ghost-wal.ts).
    if (role === "writer" && slot.conn) this.ghosts.beforeWriterCloses(this.ghostFiles(slot.conn));
    this.slots[role] = undefined;
    if (slot.conn) this.closeConnection(slot.conn);
    if (this.idle) this.retire();
  }

  /** No store of this process refers to the inode any more. */
  get idle(): boolean {
    return !this.slots.writer && !this.slots.reader;
  }

  /** True while some slot's connection is open. */
  private get connected(): boolean {
    return Boolean(this.slots.writer?.conn || this.slots.reader?.conn);
  }

  /**
   * Close every connection and reopen the ones still referenced, on the
   * current files (F3 recovery). The locks, and with it every kernel
   * lock this process holds on the inode (presence, the shared structural
   * gate, the gateway lock), stays held throughout: its descriptors are its
   * own, so closing the connections cannot drop them. The entry stays in
   * the registry, so a store opened meanwhile shares these connections (C1).
   * Throws HEARTH_GENERATION_CHANGED when the database file itself is no
   * longer the inode this process holds: that store cannot be reattached.
   */
  reopen(config: HearthConfig): Promise<GhostOutcome> {
    this.reopening ??= this.reattachAll(config).finally(() => {
      this.reopening = undefined;
    });
    return this.reopening;
  }

  private async reattachAll(config: HearthConfig): Promise<GhostOutcome> {
    const ghost = this.ghosts.beforeReopen(this.removedGeneration());
    // A reserved connection not opened yet stays so (it opens on the current files when used).
    const roles = (["writer", "reader"] as const).filter(
      (r) => this.slots[r] && !this.slots[r]!.lazy,
    );
    for (const role of roles) {
      const slot = this.slots[role]!;
      const conn = slot.conn;
      slot.conn = undefined;
      if (conn) this.closeConnection(conn);
    }
    // Every connection of this process on the removed files is closed before
    // a new one opens. SQLite's unix VFS keeps one -shm mapping per database
    // inode per process: a connection opened while an old one (a reader
    // thread's, the checkpoint thread's) still lived would share the removed
    // wal-index and write the new -wal behind it, unseen by every other
    // process, which then wrote over those frames (the torture run's silent
    // loss of 1,999 acknowledged writes, issue 41.5).
    await this.walSync?.settled();
    await this.pool?.restart();
    assertSameGeneration(this.path, this.key);
    assertNoRemovedIndex(this.path, this.key);
    for (const role of roles) this.acquire(role, config, undefined, true);
    return ghost;
  }

  /** What a save before a reopen or a park works on: none when the database file itself is another now. */
  private removedGeneration(): GhostFiles | undefined {
    const writer = this.slots.writer?.conn;
    return stillInode(this.path, this.key)
      ? this.ghostFiles(writer, writer ?? this.slots.reader?.conn)
      : undefined;
  }

  /** What ghost-wal.ts works on: this entry's guard and the connections that still see its WAL. */
  private ghostFiles(writer: Connection | undefined, any = writer): GhostFiles | undefined {
    return this.guard ? { path: this.path, guard: this.guard, writer, any } : undefined;
  }

  private closeConnection(conn: Connection): void {
    const last = !this.connected;
    const guard = this.guard;
    // On the last close, SQLite checkpoints and removes the WAL if it can get
    // an EXCLUSIVE lock. Release our OFD locks first so it can, unless the
    // generation is a ghost: then keep them, so the ghost WAL is never
    // checkpointed into the live database.
    if (last && guard && !guard.isGhost) guard.unlock();
    conn.close();
    if (last) this.closeGuard();
  }

  private closeGuard(): void {
    if (!this.guard) return;
    this.guard.unlock();
    this.guard.closeDescriptors();
    this.guard = undefined;
  }

  /**
   * Settles once the reader threads stopped at the last retire() have closed
   * their connections (and with them this process's mapping of the -shm).
   * A store's close() waits for it, so that a caller who removes the store
   * and makes a new one at once is not refused for a mapping still held.
   */
  threadsClosed: Promise<void> = Promise.resolve();

  /** The last store let go: drop the kernel locks and leave the registry. */
  retire(): void {
    if (this.pool) this.threadsClosed = this.pool.close();
    this.pool = undefined;
    this.closeGuard();
    this.locks.close();
    if (entries.get(this.key) === this) entries.delete(this.key);
    unwatchQuiet(this);
  }
}

const entries = new Map<string, DatabaseEntry>();

export function findEntry(key: string): DatabaseEntry | undefined {
  return entries.get(key);
}

export function createEntry(key: string, path: string): DatabaseEntry {
  if (entries.has(key))
    throw new HearthError("HEARTH_INTERNAL", `internal: registry already holds ${path}`);
  const entry = new DatabaseEntry(key, path);
  entries.set(key, entry);
  watchQuiet(entry);
  return entry;
}

export function dropEntryIfIdle(entry: DatabaseEntry): void {
  if (entry.idle && entries.get(entry.key) === entry) entry.retire();
}

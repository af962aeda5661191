import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import { FileGuard } from "../files/guard.js";
import { lstatOrNull } from "../files/inspect.js";
import { InodeLocks } from "../process/inode-locks.js";
import { Connection, type ConnectionRole } from "./connection.js";

/**
 * The per-process registry of connections, keyed by database inode (C1).
 *
 * At most one read-write connection per database exists in a process, shared
 * by every store opened on it; read-only work uses a separate read-only
 * connection, also shared. The entry owns the file guard (F2/F3), whose
 * descriptors stay open until the last connection to the inode has closed.
 */
export class DatabaseEntry {
  readonly key: string;
  readonly path: string;
  walMode = false;
  guard: FileGuard | undefined;
  /** Presence, gate and write locks of this process on the inode. */
  readonly locks: InodeLocks;
  /** A slot with refs but no connection is one whose reopen failed: its stores see HEARTH_GENERATION_CHANGED until a reopen succeeds. */
  private readonly slots: Record<
    ConnectionRole,
    { conn: Connection | undefined; refs: number } | undefined
  > = {
    writer: undefined,
    reader: undefined,
  };

  constructor(key: string, path: string) {
    this.key = key;
    this.path = path;
    this.locks = new InodeLocks(path, key);
  }

  connection(role: ConnectionRole): Connection | undefined {
    return this.slots[role]?.conn;
  }

  /** A store of this process holds `role` (its connection may be detached after a failed reopen). */
  hasSlot(role: ConnectionRole): boolean {
    return this.slots[role] !== undefined;
  }

  /**
   * Take a reference on the connection for `role`, opening it when needed.
   * `setup` runs on a new connection before the guard is taken (journal
   * mode, migrations).
   */
  acquire(
    role: ConnectionRole,
    config: HearthConfig,
    setup?: (conn: Connection) => void,
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
        this.guard = new FileGuard(this.path, this.walMode);
      }
      // In WAL mode BEGIN IMMEDIATE never waits inside SQLite: the store's
      // write path waits asynchronously instead (rollback journals still need
      // SQLite's wait at COMMIT for readers to finish).
      if (role === "writer" && this.walMode) conn.db.pragma("busy_timeout = 0");
    } catch (err) {
      conn.close();
      if (!this.connected) this.closeGuard();
      throw err;
    }
    conn.guard = this.guard;
    if (slot) slot.conn = conn;
    else this.slots[role] = { conn, refs: 1 };
    return conn;
  }

  release(role: ConnectionRole): void {
    const slot = this.slots[role];
    if (!slot) return;
    if (--slot.refs > 0) return;
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
  reopen(config: HearthConfig): void {
    const roles = (["writer", "reader"] as const).filter((r) => this.slots[r]);
    for (const role of roles) {
      const slot = this.slots[role]!;
      const conn = slot.conn;
      slot.conn = undefined;
      if (conn) this.closeConnection(conn);
    }
    this.assertSameInode();
    for (const role of roles) this.acquire(role, config);
  }

  private assertSameInode(): void {
    const stats = lstatOrNull(this.path);
    if (!stats || `${stats.dev}:${stats.ino}` !== this.key || stats.isSymbolicLink()) {
      throw new HearthError(
        "HEARTH_GENERATION_CHANGED",
        `${this.path} is no longer the database this process opened (it was ${stats ? "replaced" : "removed"}); this store cannot be reattached`,
        {
          resource: this.path,
          hint: "close this store and open a new one with openStore() (or restart the process)",
        },
      );
    }
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

  /** The last store let go: drop the kernel locks and leave the registry. */
  private retire(): void {
    this.closeGuard();
    this.locks.close();
    if (entries.get(this.key) === this) entries.delete(this.key);
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
  return entry;
}

export function dropEntryIfIdle(entry: DatabaseEntry): void {
  if (!entry.idle || entries.get(entry.key) !== entry) return;
  entry.locks.close();
  entries.delete(entry.key);
}

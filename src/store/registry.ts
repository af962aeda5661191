import type { HearthConfig } from "../config/schema.js";
import { FileGuard } from "../files/guard.js";
import { Coordinator } from "../process/coordinator.js";
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
  readonly coordinator: Coordinator;
  private readonly slots: Record<ConnectionRole, { conn: Connection; refs: number } | undefined> = {
    writer: undefined,
    reader: undefined,
  };

  constructor(key: string, path: string) {
    this.key = key;
    this.path = path;
    this.coordinator = new Coordinator(path, key);
  }

  connection(role: ConnectionRole): Connection | undefined {
    return this.slots[role]?.conn;
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
    if (slot) {
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
    } catch (err) {
      conn.close();
      throw err;
    }
    conn.guard = this.guard;
    this.slots[role] = { conn, refs: 1 };
    return conn;
  }

  release(role: ConnectionRole): void {
    const slot = this.slots[role];
    if (!slot) return;
    if (--slot.refs > 0) return;
    this.slots[role] = undefined;
    this.closeConnection(slot.conn);
  }

  get idle(): boolean {
    return !this.slots.writer && !this.slots.reader;
  }

  /** Close every connection and reopen the ones still referenced, on the current files. */
  reopen(config: HearthConfig): void {
    const roles = (["writer", "reader"] as const).filter((r) => this.slots[r]);
    const refs = roles.map((r) => this.slots[r]!.refs);
    for (const role of roles) {
      const slot = this.slots[role]!;
      this.slots[role] = undefined;
      this.closeConnection(slot.conn);
    }
    roles.forEach((role, i) => {
      this.acquire(role, config);
      this.slots[role]!.refs = refs[i]!;
    });
  }

  private closeConnection(conn: Connection): void {
    const last = this.idle;
    const guard = this.guard;
    // On the last close, SQLite checkpoints and removes the WAL if it can get
    // an EXCLUSIVE lock. Release our OFD locks first so it can, unless the
    // generation is a ghost: then keep them, so the ghost WAL is never
    // checkpointed into the live database.
    if (last && guard && !guard.isGhost) guard.unlock();
    conn.close();
    if (last && guard) {
      guard.unlock();
      guard.closeDescriptors();
      this.guard = undefined;
      this.coordinator.close();
      entries.delete(this.key);
    }
  }
}

const entries = new Map<string, DatabaseEntry>();

export function findEntry(key: string): DatabaseEntry | undefined {
  return entries.get(key);
}

export function createEntry(key: string, path: string): DatabaseEntry {
  if (entries.has(key)) throw new Error(`internal: registry already holds ${path}`);
  const entry = new DatabaseEntry(key, path);
  entries.set(key, entry);
  return entry;
}

export function dropEntryIfIdle(entry: DatabaseEntry): void {
  if (!entry.idle || entries.get(entry.key) !== entry) return;
  entry.coordinator.close();
  entries.delete(entry.key);
}

import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import fsx from "fs-native-extensions";
import { HearthError } from "../errors.js";
import { QuietDir } from "./quiet-dir.js";
import { SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE, SQLITE_SHM_DMS } from "./sqlite-lock-bytes.js";

interface Watched {
  path: string;
  fd: number;
  /** Device and inode of the open file: fixed for as long as the descriptor is open. */
  dev: number;
  ino: number;
  /** How check() tells that this file lost its name. */
  gone: () => boolean;
  /** The -wal watched by name: its /proc/self/fd link and the name it read at open (walLink). */
  link?: { link: string; name: string };
}

/**
 * The name this descriptor was opened by is gone: `/proc/self/fd/N` no
 * longer reads `opened`. It ends in " (deleted)" once the file is unlinked
 * or another file is renamed over it, even while a second hard link keeps
 * the inode alive, and it reads another path once the file (or a directory
 * above it) is renamed away, where every other process now finds no -wal.
 * For the -wal, not fstat: since Linux 6.13 a stat that reads a file's
 * timestamps makes the next write stamp it with a fine-grained time, so
 * the -wal's inode turned dirty at every commit and every commit's fsync
 * wrote it too. readlink reads no timestamp, but costs ~2 µs more than
 * fstat, so the database and -shm, which no commit fsyncs, keep the link
 * count (docs/benchmarks-history.md).
 */
function nameChanged(link: string, opened: string): () => boolean {
  return () => readlinkSync(link) !== opened;
}

/** The /proc/self/fd link of `fd` and the name it reads, when it names `path` as expected (undefined: no /proc, or a path that itself ends in " (deleted)"). */
function linkOf(fd: number, path: string): { link: string; name: string } | undefined {
  const link = `/proc/self/fd/${fd}`;
  try {
    const name = readlinkSync(link);
    const base = path.slice(path.lastIndexOf("/"));
    if (!name.endsWith(DELETED) && name.endsWith(base)) return { link, name };
  } catch {
    // no /proc: the link count still tells an unlink or a replacement
  }
  return undefined;
}
const DELETED = " (deleted)";

/** The database and -shm, and the -wal where /proc cannot tell: the inode has no name left. */
function noLinks(fd: number): () => boolean {
  return () => fstatSync(fd).nlink === 0;
}

/** `fd` when `path` names its file now (lstat, no symlink followed); else HEARTH_GENERATION_CHANGED. */
function namedBy(fd: number, path: string): number {
  const held = fstatSync(fd);
  const named = lstatSync(path);
  if (named.isSymbolicLink() || named.dev !== held.dev || named.ino !== held.ino) {
    throw new HearthError(
      "HEARTH_GENERATION_CHANGED",
      `${path} is no longer the database this process holds (it was replaced)`,
      { resource: path, hint: "reopen the store (or restart the process)" },
    );
  }
  return fd;
}

/**
 * Guards one database inode for this whole process (F2, F3).
 *
 * F2: POSIX locks belong to the process, so any stray close() on the
 * database or a sidecar silently drops every SQLite lock this process holds.
 * In WAL mode the guard therefore also holds OFD read locks (owned by its
 * own descriptors, immune to other closes) on SQLite's SHARED range and on
 * the -shm dead-man byte. While they are held, no other process can take the
 * EXCLUSIVE lock it needs to checkpoint-and-delete the WAL on close, or
 * conclude it is alone and reinitialise the -shm.
 *
 * F3: it keeps a descriptor on the database, -wal and -shm, and before and
 * after every write checks that none of them was unlinked or replaced (by
 * one stat of their directory while nothing in it changed since a check by
 * file: src/files/quiet-dir.ts). A
 * process writing to a ghost generation is stopped with
 * HEARTH_GENERATION_CHANGED instead of acknowledging lost work.
 *
 * Descriptors are opened once and closed only after the last connection
 * to the inode in this process has closed, so the guard itself never drops
 * anyone's locks.
 */
export class FileGuard {
  readonly dbPath: string;
  readonly walMode: boolean;
  private readonly files: Watched[] = [];
  private locked = false;
  private ghost: string | undefined;
  private writable: number | undefined;
  /** When check() last found every file under its name (performance.now()). */
  private passedAt = Number.NEGATIVE_INFINITY;
  /** The files' directory: unchanged since a check by file, it answers for them (src/files/quiet-dir.ts). */
  private readonly dir: QuietDir;

  /** The database descriptor when it is borrowed (its owner closes it, never the guard). */
  private readonly borrowed: number | undefined;

  /**
   * `dbFd`: a descriptor on the database that another owner keeps open for
   * at least as long as this guard (the process's kernel locks on the inode,
   * src/process/inode-locks.ts): the guard takes its locks and its checks
   * through it instead of opening one more (one descriptor per served
   * profile fewer; locks at other offsets of one open file never conflict).
   * It must be the file the path names now, else HEARTH_GENERATION_CHANGED.
   */
  constructor(dbPath: string, walMode: boolean, dbFd?: number) {
    this.dbPath = dbPath;
    this.walMode = walMode;
    this.borrowed = dbFd;
    this.dir = new QuietDir(dirname(dbPath));
    const suffixes = walMode ? ["", "-wal", "-shm"] : [""];
    try {
      for (const suffix of suffixes) {
        const path = dbPath + suffix;
        const fd =
          suffix === "" && dbFd !== undefined
            ? namedBy(dbFd, path)
            : openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
        // The -wal by its name when /proc/self/fd names it as expected, else by its link count.
        const link = suffix === "-wal" ? linkOf(fd, path) : undefined;
        const gone = link ? nameChanged(link.link, link.name) : noLinks(fd);
        const { dev, ino } = fstatSync(fd);
        this.files.push({ path, fd, dev, ino, gone, ...(link ? { link } : {}) });
      }
      if (walMode) this.lock();
    } catch (err) {
      this.closeDescriptors();
      throw err;
    }
  }

  private lock(): void {
    const [db, , shm] = this.files;
    // Shared OFD locks never conflict with other readers or writers in WAL
    // mode; they only block the EXCLUSIVE and DMS-write locks above.
    const dbLocked = fsx.tryLock(db!.fd, SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE, { shared: true });
    const shmLocked = fsx.tryLock(shm!.fd, SQLITE_SHM_DMS, 1, { shared: true });
    if (!dbLocked || !shmLocked) {
      throw new HearthError(
        "HEARTH_STORE_HELD",
        `cannot hold ${this.dbPath}: another process holds it exclusively (a restore or journal-mode change may be running)`,
        {
          resource: this.dbPath,
          hint: "hearth ps   # shows who holds the store; retry when it is done",
        },
      );
    }
    this.locked = true;
  }

  /**
   * Throws when the generation this process uses is gone. Cheap: one stat
   * of the files' directory while no entry in it changed since the last
   * check by file; else that, and one fstat or readlink per file.
   */
  check(): void {
    if (this.ghost !== undefined) throw this.ghostError();
    const dir = this.dir.unchanged();
    if (dir !== true) {
      for (const file of this.files) {
        if (file.gone()) {
          this.dir.forget();
          this.ghost = `${file.path} was unlinked or replaced under this process (inode ${file.ino} lost that name)`;
          throw this.ghostError();
        }
      }
      this.dir.vouch(dir);
    }
    this.passedAt = performance.now();
  }

  /**
   * check(), unless one passed less than `withinMs` ago (performance.now()).
   * A transaction's check before it writes may lean on the check after the
   * last commit when no more time has passed since than a transaction takes
   * between its own check and its write: a replacement in that gap is the
   * same race every write already runs, and the check after the commit
   * still stops the write from being acknowledged (docs/durability.md,
   * "Ghost generations").
   */
  checkUnlessWithin(withinMs: number): void {
    if (this.ghost !== undefined) throw this.ghostError();
    if (performance.now() - this.passedAt < withinMs) return;
    this.check();
  }

  /**
   * A read-write descriptor on the database this guard watches, opened on
   * first use and kept until closeDescriptors(): closing one while a
   * connection is open would drop SQLite's POSIX locks (F2). It takes the
   * write lock on SQLite's PENDING byte when the removed WAL is saved
   * (src/store/sqlite/ghost-wal.ts); undefined when the path no longer
   * names the file this guard opened, or cannot be opened for writing.
   */
  writableDbFd(): number | undefined {
    if (this.writable !== undefined) return this.writable;
    const db = this.files[0];
    if (!db) return undefined;
    let fd: number;
    try {
      fd = openSync(db.path, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    if (fstatSync(fd).ino !== db.ino) {
      closeSync(fd); // another file: none of this process's locks are on it
      return undefined;
    }
    this.writable = fd;
    return fd;
  }

  /**
   * Device and inode of the database ("") or a sidecar this guard opened:
   * read from its descriptor when it was opened. An open descriptor's file
   * never changes, so no stat is needed; none of the -wal in particular,
   * whose stat would make the next commit's fsync write its inode too
   * (nameChanged; issue 44: the checkpoint jobs asked for it at every
   * checkpoint).
   */
  identity(suffix: "" | "-wal" | "-shm"): { dev: number; ino: number } | undefined {
    const file = this.files.find((f) => f.path === this.dbPath + suffix);
    return file ? { dev: file.dev, ino: file.ino } : undefined;
  }

  /**
   * The -wal's /proc/self/fd link and the name it read when opened, when
   * the -wal is watched by name: while the link reads that name, the path
   * names the file this guard holds (nameChanged), which the checkpoint
   * thread checks so instead of a stat of the -wal by path. Undefined once
   * the descriptors are closed, or where /proc cannot tell.
   */
  walLink(): { link: string; name: string } | undefined {
    return this.walMode ? this.files[1]?.link : undefined;
  }

  /** The descriptor on -wal (WAL mode only): fsync through it reaches the WAL SQLite writes. */
  get walFd(): number {
    return this.sidecar(1);
  }

  /** The descriptor on -shm (WAL mode only): the wal-index header is read through it. */
  get shmFd(): number {
    return this.sidecar(2);
  }

  private sidecar(index: number): number {
    const file = this.walMode ? this.files[index] : undefined;
    if (!file)
      throw new HearthError("HEARTH_INTERNAL", `internal: ${this.dbPath} has no WAL sidecars open`);
    return file.fd;
  }

  /** True once check() has seen the generation change. */
  get isGhost(): boolean {
    return this.ghost !== undefined;
  }

  /** Release the OFD locks but keep the descriptors (see closeConnections in the registry). */
  unlock(): void {
    if (!this.locked) return;
    const [db, , shm] = this.files;
    fsx.unlock(db!.fd, SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE);
    fsx.unlock(shm!.fd, SQLITE_SHM_DMS, 1);
    this.locked = false;
  }

  /** Close the descriptors. Only call once no connection to the inode is open in this process. */
  closeDescriptors(): void {
    for (const file of this.files.splice(0)) if (file.fd !== this.borrowed) closeSync(file.fd);
    if (this.writable !== undefined) closeSync(this.writable);
    this.writable = undefined;
  }

  private ghostError(): HearthError {
    return new HearthError(
      "HEARTH_GENERATION_CHANGED",
      `refusing to write to ${this.dbPath}: ${this.ghost}; writes here would go to a file no other process sees`,
      {
        resource: this.dbPath,
        hint: "call store.reopen() (or restart the process) to attach to the current files; hearth doctor checks the store",
      },
    );
  }
}

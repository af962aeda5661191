import { closeSync, constants, fstatSync, openSync } from "node:fs";
import fsx from "fs-native-extensions";
import { HearthError } from "../errors.js";
import { SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE, SQLITE_SHM_DMS } from "./sqlite-lock-bytes.js";

interface Watched {
  path: string;
  fd: number;
  ino: number;
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
 * after every write checks that none of them was unlinked or replaced. A
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

  constructor(dbPath: string, walMode: boolean) {
    this.dbPath = dbPath;
    this.walMode = walMode;
    const suffixes = walMode ? ["", "-wal", "-shm"] : [""];
    try {
      for (const suffix of suffixes) {
        const path = dbPath + suffix;
        const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
        this.files.push({ path, fd, ino: fstatSync(fd).ino });
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

  /** Throws when the generation this process uses is gone. Cheap: one fstat per file. */
  check(): void {
    if (this.ghost !== undefined) throw this.ghostError();
    for (const file of this.files) {
      if (fstatSync(file.fd).nlink === 0) {
        this.ghost = `${file.path} was unlinked or replaced under this process (inode ${file.ino} has no name left)`;
        throw this.ghostError();
      }
    }
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
    for (const file of this.files.splice(0)) closeSync(file.fd);
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

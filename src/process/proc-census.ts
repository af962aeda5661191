import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { describeProcess, type ProcessInfo } from "./identity.js";
import { type LockEntry, parseLocks, readKernelLocks } from "./proc-locks.js";

/** What one process's descriptor table showed: the deleted files it holds, or why it could not be read. */
export type FdTable = { deleted: Set<string> } | "gone" | "closed";

/**
 * One reading of the kernel's process tables (/proc/locks, every process's
 * fdinfo, the descriptor tables asked about), shared by every database one
 * command asks about. `hearth ps` on a home of 200 profiles served by one
 * gateway read that gateway's ~2,000 descriptors once per profile (46 s);
 * with a census it reads each table once per invocation. A census is a
 * snapshot: a decision that must see the present (readHoldersSettled) takes
 * a new one for each read.
 */
export class ProcCensus {
  private locks: LockEntry[] | undefined;
  private fdinfo: Map<number, LockEntry[]> | undefined;
  private fdinfoByFile: Map<string, { pid: number; lock: LockEntry }[]> | undefined;
  private kernelByFile: Map<string, LockEntry[]> | undefined;
  private readonly lockersByDevice = new Map<string, Map<number, string[]>>();
  private readonly tables = new Map<number, FdTable>();
  private readonly processes = new Map<number, ProcessInfo>();

  /** /proc/locks, read once. Fails closed (HEARTH_HOLDERS_UNKNOWN) for `resource`. */
  kernelLocks(resource: string): LockEntry[] {
    this.locks ??= readKernelLocks(resource);
    return this.locks;
  }

  /** kernelLocks() by file (`device:inode`), indexed once per census: one command asks about many stores. */
  kernelLocksByFile(resource: string): Map<string, LockEntry[]> {
    this.kernelByFile ??= byFile(this.kernelLocks(resource));
    return this.kernelByFile;
  }

  /**
   * Every lock named in some process's /proc/<pid>/fdinfo (readable only for
   * our own processes, or as root), by the pid whose table holds it: one pass
   * over every process. Each descriptor's locks come from one small read, so
   * unlike /proc/locks (handed out a page at a time, each page a snapshot of
   * its own: a line skipped or repeated while others lock and unlock) this
   * cannot miss a lock that stayed put while it was read.
   */
  fdinfoLocks(): Map<number, LockEntry[]> {
    if (this.fdinfo) return this.fdinfo;
    const owners = new Map<number, LockEntry[]>();
    for (const pid of numericEntries("/proc")) {
      for (const fd of numericEntries(`/proc/${pid}/fdinfo`)) {
        let info: string;
        try {
          info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
        } catch {
          continue;
        }
        if (!info.includes("lock:")) continue;
        const locks = parseLocks(info.replace(/^lock:\s*/gm, ""));
        if (locks.length === 0) continue;
        const list = owners.get(pid);
        if (list) list.push(...locks);
        else owners.set(pid, locks);
      }
    }
    this.fdinfo = owners;
    return owners;
  }

  /** The pids /proc/locks names (POSIX and flock locks) on files of `device`, each with the files (`device:inode`). */
  lockersOn(device: string, resource: string): Map<number, string[]> {
    let lockers = this.lockersByDevice.get(device);
    if (lockers) return lockers;
    lockers = new Map();
    for (const lock of this.kernelLocks(resource)) {
      if (lock.device !== device || lock.pid <= 0) continue;
      const ids = lockers.get(lock.pid);
      const id = `${lock.device}:${lock.inode}`;
      if (ids) ids.push(id);
      else lockers.set(lock.pid, [id]);
    }
    this.lockersByDevice.set(device, lockers);
    return lockers;
  }

  /**
   * fdinfoLocks() on one file (`device:inode` as /proc/locks prints it),
   * each with the pid whose table holds it; indexed once per census.
   */
  fdinfoLocksOn(id: string): { pid: number; lock: LockEntry }[] {
    if (!this.fdinfoByFile) {
      this.fdinfoByFile = new Map();
      for (const [pid, locks] of this.fdinfoLocks()) {
        for (const lock of locks) {
          const file = `${lock.device}:${lock.inode}`;
          const list = this.fdinfoByFile.get(file);
          if (list) list.push({ pid, lock });
          else this.fdinfoByFile.set(file, [{ pid, lock }]);
        }
      }
    }
    return this.fdinfoByFile.get(id) ?? [];
  }

  /** The deleted files `pid` holds open (targets ending " (deleted)"), from one read of /proc/<pid>/fd. */
  fdTable(pid: number): FdTable {
    let table = this.tables.get(pid);
    if (table) return table;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch (err) {
      // A process that exited meanwhile holds nothing; only a closed door is "closed".
      table = (err as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : "closed";
      this.tables.set(pid, table);
      return table;
    }
    const deleted = new Set<string>();
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (target.endsWith(" (deleted)")) deleted.add(target);
      } catch {
        // the descriptor closed while we looked
      }
    }
    table = { deleted };
    this.tables.set(pid, table);
    return table;
  }

  /** describeProcess(pid), read once. */
  describe(pid: number): ProcessInfo {
    let info = this.processes.get(pid);
    if (!info) {
      info = describeProcess(pid);
      this.processes.set(pid, info);
    }
    return info;
  }
}

function byFile(locks: LockEntry[]): Map<string, LockEntry[]> {
  const files = new Map<string, LockEntry[]>();
  for (const lock of locks) {
    const id = `${lock.device}:${lock.inode}`;
    const list = files.get(id);
    if (list) list.push(lock);
    else files.set(id, [lock]);
  }
  return files;
}

function numericEntries(dir: string): number[] {
  try {
    return readdirSync(dir)
      .map(Number)
      .filter((n) => Number.isInteger(n));
  } catch {
    return [];
  }
}

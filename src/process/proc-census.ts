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
  private ofd: Map<number, LockEntry[]> | undefined;
  private readonly tables = new Map<number, FdTable>();
  private readonly processes = new Map<number, ProcessInfo>();

  /** /proc/locks, read once. Fails closed (HEARTH_HOLDERS_UNKNOWN) for `resource`. */
  kernelLocks(resource: string): LockEntry[] {
    this.locks ??= readKernelLocks(resource);
    return this.locks;
  }

  /**
   * Every OFD lock named in some process's /proc/<pid>/fdinfo (readable only
   * for our own processes, or as root), by pid: one pass over every process.
   */
  ofdLocks(): Map<number, LockEntry[]> {
    if (this.ofd) return this.ofd;
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
        for (const lock of parseLocks(info.replace(/^lock:\s*/gm, ""))) {
          if (lock.kind !== "OFDLCK") continue;
          const list = owners.get(pid);
          if (list) list.push(lock);
          else owners.set(pid, [lock]);
        }
      }
    }
    this.ofd = owners;
    return owners;
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

function numericEntries(dir: string): number[] {
  try {
    return readdirSync(dir)
      .map(Number)
      .filter((n) => Number.isInteger(n));
  } catch {
    return [];
  }
}

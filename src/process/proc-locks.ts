import { closeSync, openSync, read, readFileSync } from "node:fs";
import { HearthError } from "../errors.js";

/** One lock line of /proc/locks (or of a /proc/<pid>/fdinfo "lock:" line). */
export interface LockEntry {
  kind: "POSIX" | "OFDLCK" | "FLOCK" | string;
  access: "READ" | "WRITE" | string;
  /** -1 for OFD locks: the kernel does not tie them to a process. */
  pid: number;
  device: string;
  inode: number;
  /** First locked byte. */
  start: number;
  /** Last locked byte; Infinity for "EOF". */
  end: number;
}

/** The "major:minor" (hex) form /proc/locks uses for a stat() st_dev. */
export function lockDevice(dev: number): string {
  const major = Math.floor(dev / 256) & 0xfff;
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & ~0xff);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}`;
}

export function parseLocks(text: string): LockEntry[] {
  const entries: LockEntry[] = [];
  for (const line of text.split("\n")) {
    // "1: POSIX  ADVISORY  READ 1234 fe:00:2147040 1073741826 1073742335"
    // Blocked waiters are printed as "1: -> POSIX ..."; they hold nothing.
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6 || fields[1] === "->") continue;
    const [, kind, , access, pid, id, start, end] = fields;
    const parts = (id ?? "").split(":");
    if (parts.length !== 3) continue;
    entries.push({
      kind: kind ?? "",
      access: access ?? "",
      pid: Number(pid),
      device: `${parts[0]}:${parts[1]}`,
      inode: Number(parts[2]),
      start: Number(start ?? Number.NaN),
      end: end === "EOF" ? Number.POSITIVE_INFINITY : Number(end ?? Number.NaN),
    });
  }
  return entries;
}

/**
 * Start a read of /proc/locks on the libuv pool and return at once. The
 * first read of it in a process costs the kernel 5–25 ms here (measured;
 * later reads well under 1 ms, and a first read on another thread takes the
 * cost for the whole process). A command that reads holders after other
 * work (doctor) calls this first, so that cost overlaps the work. What it
 * reads is discarded: the census is readKernelLocks, which fails closed.
 */
export function warmKernelLocks(): void {
  let fd: number;
  try {
    fd = openSync("/proc/locks", "r");
  } catch {
    return;
  }
  read(fd, Buffer.alloc(4096), 0, 4096, null, () => closeSync(fd));
}

/** Every lock the kernel holds, from /proc/locks. Fails closed: unreadable means HEARTH_HOLDERS_UNKNOWN. */
export function readKernelLocks(resource: string): LockEntry[] {
  try {
    return parseLocks(readFileSync("/proc/locks", "utf8"));
  } catch (err) {
    throw new HearthError(
      "HEARTH_HOLDERS_UNKNOWN",
      `cannot tell who holds ${resource}: /proc/locks is unreadable (${String(err)})`,
      {
        resource,
        cause: err,
        hint: "run on Linux with /proc mounted, or stop every hearth process first",
      },
    );
  }
}

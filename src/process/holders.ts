import { readdirSync, readFileSync, type Stats } from "node:fs";
import { HearthError } from "../errors.js";
import { describeProcess, type ProcessInfo } from "./identity.js";

/** One lock line of /proc/locks that sits on a file we care about. */
export interface LockEntry {
  kind: "POSIX" | "OFDLCK" | "FLOCK" | string;
  access: "READ" | "WRITE" | string;
  /** -1 for OFD locks: the kernel does not tie them to a process. */
  pid: number;
  inode: number;
  device: string;
}

export interface Holder extends ProcessInfo {
  /** Which of the watched files the process holds locks on. */
  files: string[];
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
    const [, kind, , access, pid, id] = fields;
    const parts = (id ?? "").split(":");
    if (parts.length !== 3) continue;
    entries.push({
      kind: kind ?? "",
      access: access ?? "",
      pid: Number(pid),
      device: `${parts[0]}:${parts[1]}`,
      inode: Number(parts[2]),
    });
  }
  return entries;
}

/**
 * Every process other than this one that holds a kernel lock on any of
 * `files` (path → stat). Fails closed: when /proc/locks cannot be read, or an
 * OFD lock's owner cannot be found, it throws HEARTH_HOLDERS_UNKNOWN rather
 * than reporting "nobody".
 */
export function otherHolders(files: Map<string, Stats>): Holder[] {
  let text: string;
  try {
    text = readFileSync("/proc/locks", "utf8");
  } catch (err) {
    throw new HearthError(
      "HEARTH_HOLDERS_UNKNOWN",
      `cannot tell who holds ${[...files.keys()][0]}: /proc/locks is unreadable (${String(err)})`,
      { cause: err, hint: "run on Linux with /proc mounted, or stop every hearth process first" },
    );
  }
  const byId = new Map<string, string>();
  for (const [path, st] of files) byId.set(`${lockDevice(st.dev)}:${st.ino}`, path);
  const holders = new Map<number, Set<string>>();
  // OFD locks show pid -1; count them so every one must be matched to an owner.
  const unownedOfd = new Map<string, number>();
  for (const lock of parseLocks(text)) {
    const path = byId.get(`${lock.device}:${lock.inode}`);
    if (!path) continue;
    const id = `${lock.device}:${lock.inode}`;
    if (lock.pid === -1) unownedOfd.set(id, (unownedOfd.get(id) ?? 0) + 1);
    else if (lock.pid !== process.pid) addTo(holders, lock.pid, path);
  }
  if (unownedOfd.size > 0) {
    findOfdOwners(unownedOfd, byId, holders);
    if ([...unownedOfd.values()].some((n) => n > 0)) {
      throw new HearthError(
        "HEARTH_HOLDERS_UNKNOWN",
        `cannot tell who holds ${[...files.keys()][0]}: an OFD lock's owner is not visible in /proc/*/fdinfo`,
        { hint: "run as the user (or root) that runs the other hearth processes" },
      );
    }
  }
  return [...holders].map(([pid, paths]) => ({ ...describeProcess(pid), files: [...paths] }));
}

/** Match OFD locks to processes through /proc/<pid>/fdinfo; decrements `missing` per match. */
function findOfdOwners(
  missing: Map<string, number>,
  byId: Map<string, string>,
  holders: Map<number, Set<string>>,
): void {
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fdinfo`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let info: string;
      try {
        info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
      } catch {
        continue;
      }
      for (const lock of parseLocks(info.replace(/^lock:\s*/gm, ""))) {
        const id = `${lock.device}:${lock.inode}`;
        if (lock.kind !== "OFDLCK" || !missing.has(id)) continue;
        missing.set(id, missing.get(id)! - 1);
        if (pid !== process.pid) addTo(holders, pid, byId.get(id)!);
      }
    }
  }
}

function addTo(map: Map<number, Set<string>>, pid: number, path: string): void {
  const set = map.get(pid) ?? new Set<string>();
  set.add(path);
  map.set(pid, set);
}

/** Lines like "pid 3008891  hearth chat  since 2026-09-14T10:37:00Z". */
export function describeHolders(holders: Holder[]): string {
  return holders
    .map(
      (h) =>
        `  pid ${h.pid}  ${h.commandLine ?? "(command line unreadable)"}  since ${h.since?.toISOString() ?? "unknown"}`,
    )
    .join("\n");
}

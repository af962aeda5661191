import { lstatSync, type Stats } from "node:fs";
import { HearthError } from "../errors.js";
import { SIDECAR_SUFFIXES } from "../files/inspect.js";
import { SQLITE_SHARED_FIRST, SQLITE_SHM_DMS } from "../files/sqlite-lock-bytes.js";
import type { ProcessInfo } from "./identity.js";
import {
  decodePresence,
  GATE_OFFSET,
  GATEWAY_OFFSET,
  type PresenceRole,
  type ProcessKind,
  TURNSTILE_OFFSET,
  WRITE_OFFSET,
} from "./lock-map.js";
import { ProcCensus } from "./proc-census.js";
import { type LockEntry, lockDevice } from "./proc-locks.js";

/** A process holding the database or a sidecar, as the kernel reports it (P5). */
export interface Holder extends ProcessInfo {
  /** From its presence lock; "unknown" for a process that is not hearth (sqlite3, another tool). */
  kind: ProcessKind;
  /** Presence roles it holds; empty when it has none (a foreign process, or role unknown). */
  roles: PresenceRole[];
  /** Which of the database files it holds locks on. */
  files: string[];
}

/** A process that still has a deleted generation of the database or a sidecar open. */
export interface GhostHolder extends ProcessInfo {
  files: string[];
}

export interface HolderReport {
  path: string;
  /** Every holder (other than this process unless includeSelf). */
  holders: Holder[];
  /** OFD locks on the files that no process could be tied to: treat as "cannot tell". */
  unexplainedLocks: number;
  ghosts: GhostHolder[];
  /** Pids whose descriptor table could not be read while looking for ghosts. */
  uninspected: number[];
}

export interface ReadHoldersOptions {
  includeSelf?: boolean;
  /** Look for processes holding deleted generations (reads /proc/<pid>/fd). Default true. */
  ghosts?: boolean;
  /**
   * The /proc reading to answer from. One census shared by many calls reads
   * each descriptor table once (hearth ps over every profile); without one,
   * this call takes its own.
   */
  census?: ProcCensus;
  /**
   * Also read every process's fdinfo (default true), so that a lock the
   * page-at-a-time /proc/locks skipped is still seen. Only a reading that
   * names nothing for a decision (a gauge) turns it off: the scan costs a
   * read per descriptor on the host.
   */
  fdinfo?: boolean;
}

/**
 * Who holds the database at `path`, from /proc/locks. Hearth processes are
 * named by their presence locks (pid, kind and role encoded in the offset),
 * so this works even when their descriptor tables cannot be read; foreign
 * POSIX/flock holders are named by the pid the kernel prints. OFD locks that
 * neither explains are looked up in /proc/<pid>/fdinfo and, failing that,
 * counted in `unexplainedLocks`. Throws HEARTH_HOLDERS_UNKNOWN when
 * /proc/locks cannot be read.
 */
export function readHolders(path: string, options: ReadHoldersOptions = {}): HolderReport {
  const census = options.census ?? new ProcCensus();
  const files = watchedFiles(path);
  const kernelByFile = census.kernelLocksByFile(path);
  censusHooks.afterKernelLocks?.();
  const byId = new Map<string, string>();
  for (const [file, st] of files) byId.set(`${lockDevice(st.dev)}:${st.ino}`, file);
  const kernel = [...byId.keys()].flatMap((id) => kernelByFile.get(id) ?? []);
  const locks = options.fdinfo === false ? kernel : withFdinfo(kernel, census, byId);
  const dbStats = files.get(path);
  const dbId = dbStats ? `${lockDevice(dbStats.dev)}:${dbStats.ino}` : undefined;

  const found = new Map<
    number,
    { roles: Set<PresenceRole>; kind: ProcessKind; files: Set<string> }
  >();
  const entry = (pid: number) => {
    let e = found.get(pid);
    if (!e) {
      e = { roles: new Set(), kind: "unknown", files: new Set() };
      found.set(pid, e);
    }
    return e;
  };
  const anonymous: { lock: LockEntry; file: string }[] = [];
  for (const lock of locks) {
    const id = `${lock.device}:${lock.inode}`;
    const file = byId.get(id);
    if (!file) continue;
    const presence =
      id === dbId && lock.start === lock.end ? decodePresence(lock.start) : undefined;
    if (presence) {
      const e = entry(presence.pid);
      e.roles.add(presence.role);
      e.kind = presence.kind;
      e.files.add(file);
    } else if (lock.pid > 0) {
      entry(lock.pid).files.add(file);
    } else {
      anonymous.push({ lock, file });
    }
  }

  const accounting = lockAccounting(found, path, files.has(`${path}-shm`));
  const excess = accounting.excess(anonymous);
  let unexplainedLocks = 0;
  if ([...excess.values()].some((n) => n > 0)) {
    // fdinfo names the owner of each OFD lock it can see. A hearth process's
    // lock counts here only where no allowance already covered it.
    const matched = new Map<string, number>();
    for (const [pid, owned] of ofdOwners(census, byId)) {
      const present = (found.get(pid)?.roles.size ?? 0) > 0;
      for (const { lock, file } of owned) {
        const [category, allowance] = accounting.category(lock, file);
        if (present && allowance > 0) continue;
        matched.set(category, (matched.get(category) ?? 0) + 1);
        if (!present) entry(pid).files.add(file);
      }
    }
    for (const [category, n] of excess)
      unexplainedLocks += Math.max(0, n - (matched.get(category) ?? 0));
  }

  const holders: Holder[] = [];
  for (const [pid, e] of found) {
    if (pid === process.pid && !options.includeSelf) continue;
    holders.push({
      ...census.describe(pid),
      kind: e.kind,
      roles: [...e.roles].sort(),
      files: [...e.files].sort(),
    });
  }
  holders.sort((a, b) => a.pid - b.pid);

  const report: HolderReport = { path, holders, unexplainedLocks, ghosts: [], uninspected: [] };
  if (options.ghosts !== false && dbStats) {
    const device = lockDevice(dbStats.dev);
    const candidates = new Set<number>(found.keys());
    // A process with a lock on another file of the device may hold a deleted generation.
    for (const [pid, ids] of census.lockersOn(device, path)) {
      if (ids.some((id) => !byId.has(id))) candidates.add(pid);
    }
    findGhosts(census, path, candidates, report, options.includeSelf === true);
  }
  return report;
}

/**
 * Test-only: `afterKernelLocks` runs between the /proc/locks read and the
 * fdinfo scan, the instant at which a holder that exits leaves a lock the
 * census saw but can no longer tie to a process.
 */
export const censusHooks: { afterKernelLocks?: () => void } = {};

/** How many times a census with unexplained locks is taken, and how far apart. */
const SETTLE_READS = 5;
const SETTLE_GAP_MS = 25;

/**
 * readHolders() for a decision (a structural claim, a maintenance window):
 * while some lock is unexplained, read again, up to SETTLE_READS times
 * SETTLE_GAP_MS apart. A process that is starting or exiting holds its
 * file-guard locks for an instant without its presence lock (found by the
 * torture run: 2 refusals naming no holder in 266 structural operations).
 * Locks still unexplained after that are refused by assertHoldersKnown
 * (fail closed). The pauses block the thread, and happen only when the
 * census found a lock it cannot explain: a short-lived command's way; a
 * daemon or the library uses settling(), whose pauses are awaited.
 */
export function readHoldersSettled(path: string, options: ReadHoldersOptions = {}): HolderReport {
  let report = readHolders(path, options);
  for (let i = 1; i < SETTLE_READS && report.unexplainedLocks > 0; i++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SETTLE_GAP_MS);
    report = readHolders(path, options);
  }
  return report;
}

/**
 * The same re-reading for a long-lived process (the dashboard, the
 * library's store.holders()): `read` takes a new census each time, and the
 * pauses between are awaited, so the event loop keeps running.
 */
export async function settling<T extends { unexplainedLocks: number }>(read: () => T): Promise<T> {
  let report = read();
  for (let i = 1; i < SETTLE_READS && report.unexplainedLocks > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_GAP_MS));
    report = read();
  }
  return report;
}

/** Throw HEARTH_HOLDERS_UNKNOWN when some lock on the store could not be tied to a process (fail closed). */
export function assertHoldersKnown(report: HolderReport, doing: string): void {
  if (report.unexplainedLocks === 0) return;
  throw new HearthError(
    "HEARTH_HOLDERS_UNKNOWN",
    `refusing to ${doing}: ${report.unexplainedLocks} lock(s) on ${report.path} belong to a process hearth cannot identify`,
    {
      resource: report.path,
      hint: "run as root or as the user that runs the other processes, or stop them; hearth ps lists what it can see",
    },
  );
}

/** Lines like "  pid 3008891  cli (writer)  hearth chat  since 2026-09-14T10:37:00.000Z". */
export function describeHolders(holders: readonly Holder[]): string {
  return holders
    .map((h) => {
      const what =
        h.roles.length > 0 ? `${h.kind} (${h.roles.join(", ")})` : `${h.kind} (not hearth)`;
      return `  pid ${h.pid}  ${what}  ${h.commandLine ?? "(command line unreadable)"}  since ${h.since?.toISOString() ?? "unknown"}`;
    })
    .join("\n");
}

/** A holder as plain data: error details, hearth ps --json. */
export interface HolderJson {
  pid: number;
  kind: ProcessKind;
  roles: PresenceRole[];
  commandLine: string | null;
  since: string | null;
  files: string[];
}

export function holderJson(h: Holder): HolderJson {
  return {
    pid: h.pid,
    kind: h.kind,
    roles: h.roles,
    commandLine: h.commandLine ?? null,
    since: h.since?.toISOString() ?? null,
    files: h.files,
  };
}

function watchedFiles(path: string): Map<string, Stats> {
  const files = new Map<string, Stats>();
  for (const suffix of ["", ...SIDECAR_SUFFIXES]) {
    try {
      files.set(path + suffix, lstatSync(path + suffix));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new HearthError(
        "HEARTH_HOLDERS_UNKNOWN",
        `cannot tell who holds ${path}: ${path + suffix} cannot be examined (${String(err)})`,
        { resource: path, cause: err, hint: "run as the user that owns the hearth home" },
      );
    }
  }
  return files;
}

/**
 * How anonymous (OFD) locks are accounted for by the hearth processes named
 * by presence locks. Each hearth process holds at most one guard lock on the
 * database and one on the -shm (in WAL mode only), and writers at most one
 * each on the gate, turnstile and write bytes; gateways one on the gateway
 * byte. `excess` says, per category, how many locks nobody accounts for.
 */
function lockAccounting(
  found: Map<number, { roles: Set<PresenceRole>; kind: ProcessKind }>,
  path: string,
  walMode: boolean,
) {
  const present = [...found.values()].filter((e) => e.roles.size > 0);
  const writers = present.filter((e) => e.roles.has("writer") || e.roles.has("surgeon")).length;
  const gateways = present.filter((e) => e.kind === "gateway").length;
  const category = (lock: LockEntry, file: string): [string, number] => {
    if (file === path) {
      // Hearth takes guard locks only in WAL mode (while a -shm exists):
      // otherwise an OFD lock on SQLite's range is somebody else's.
      if (lock.start === SQLITE_SHARED_FIRST) return ["guard", walMode ? present.length : 0];
      if (lock.start === GATE_OFFSET) return ["gate", writers];
      if (lock.start === TURNSTILE_OFFSET) return ["turnstile", writers];
      if (lock.start === WRITE_OFFSET) return ["write", writers];
      if (lock.start === GATEWAY_OFFSET) return ["gateway", gateways];
    } else if (file === `${path}-shm` && lock.start === SQLITE_SHM_DMS) {
      return ["dms", present.length];
    }
    return [`other:${file}:${lock.start}`, 0];
  };
  const excess = (anonymous: { lock: LockEntry; file: string }[]): Map<string, number> => {
    const counts = new Map<string, { n: number; max: number }>();
    for (const { lock, file } of anonymous) {
      const [key, max] = category(lock, file);
      const c = counts.get(key) ?? { n: 0, max };
      c.n++;
      counts.set(key, c);
    }
    return new Map([...counts].map(([key, c]) => [key, Math.max(0, c.n - c.max)]));
  };
  return { category, excess };
}

/**
 * The locks on the watched files as /proc/locks and the fdinfo tables
 * together show them: of each lock line, as many as the larger of the two
 * counts. /proc/locks comes a page at a time, each page a snapshot of its
 * own, so under churn one of its lines can be missing (a gateway listed
 * without its writer presence, in the suite beside a CPU hog) or repeated;
 * fdinfo sees every process whose table is readable, /proc/locks also the
 * others.
 */
function withFdinfo(
  kernel: LockEntry[],
  census: ProcCensus,
  byId: Map<string, string>,
): LockEntry[] {
  const key = (l: LockEntry) =>
    `${l.kind} ${l.access} ${l.pid} ${l.device}:${l.inode} ${l.start} ${l.end}`;
  const fromFdinfo = new Map<string, LockEntry[]>();
  for (const id of byId.keys()) {
    for (const { lock } of census.fdinfoLocksOn(id)) {
      const k = key(lock);
      const list = fromFdinfo.get(k);
      if (list) list.push(lock);
      else fromFdinfo.set(k, [lock]);
    }
  }
  const merged: LockEntry[] = [];
  const taken = new Map<string, number>();
  for (const lock of kernel) {
    const k = key(lock);
    const n = (taken.get(k) ?? 0) + 1;
    taken.set(k, n);
    if (n > (fromFdinfo.get(k)?.length ?? 0)) merged.push(lock);
  }
  for (const list of fromFdinfo.values()) merged.push(...list);
  return merged;
}

/** OFD locks on the watched files, by the pid whose fdinfo names them. */
function ofdOwners(
  census: ProcCensus,
  byId: Map<string, string>,
): Map<number, { lock: LockEntry; file: string }[]> {
  const owners = new Map<number, { lock: LockEntry; file: string }[]>();
  for (const [id, file] of byId) {
    for (const { pid, lock } of census.fdinfoLocksOn(id)) {
      if (lock.kind !== "OFDLCK") continue;
      const list = owners.get(pid);
      if (list) list.push({ lock, file });
      else owners.set(pid, [{ lock, file }]);
    }
  }
  return owners;
}

function findGhosts(
  census: ProcCensus,
  path: string,
  candidates: Set<number>,
  report: HolderReport,
  includeSelf: boolean,
): void {
  const names = ["", ...SIDECAR_SUFFIXES].map((s) => `${path}${s} (deleted)`);
  for (const pid of [...candidates].sort((a, b) => a - b)) {
    if (pid === process.pid && !includeSelf) continue;
    const table = census.fdTable(pid);
    if (table === "gone") continue;
    if (table === "closed") {
      report.uninspected.push(pid);
      continue;
    }
    const deleted = names.filter((n) => table.deleted.has(n));
    if (deleted.length > 0)
      report.ghosts.push({
        ...census.describe(pid),
        files: deleted.map((n) => n.slice(0, -" (deleted)".length)).sort(),
      });
  }
}

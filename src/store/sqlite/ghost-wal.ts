import { closeSync, fsyncSync, readSync } from "node:fs";
import fsx from "fs-native-extensions";
import { HearthError, isHearthError } from "../../errors.js";
import { openExclusive } from "../../files/create.js";
import type { FileGuard } from "../../files/guard.js";
import { lstatOrNull } from "../../files/inspect.js";
import { ProcCensus } from "../../process/proc-census.js";
import { type LockEntry, lockDevice, readKernelLocks } from "../../process/proc-locks.js";
import type { Connection } from "./connection.js";
import { type WalIndex, WalIndexReader } from "./wal-sync/wal-index.js";

/**
 * What only a removed WAL holds (F3, issue 41). When another program
 * unlinks -wal and -shm under a live process, the commits not yet
 * checkpointed exist only in the unlinked WAL that process still has open;
 * reattaching to new files without them loses acknowledged writes (a new
 * store: its schema too, so every request after failed). Before reattaching,
 * the process saves them through the connection that still sees them: a
 * checkpoint into the database file, which is still the live one. That is
 * safe only while nobody reads or writes the database through newer files:
 * hearth then holds SQLite's PENDING byte (no new reader can start), finds
 * neither -wal nor -shm under their names (every opener leaves them while
 * this process holds its shared lock on the database, F2), and every process
 * holding a lock on the database also holds one on the removed -shm (it is
 * one of this generation's users, not a newcomer). When saving is not safe,
 * the database as this process saw it is copied beside the store
 * (`<db>.ghost-<time>-<pid>`), and HEARTH_GENERATION_LOST names the commits
 * and that copy: never a silent loss.
 */

export type GhostOutcome =
  /** Every frame of the removed WAL was already in the database. */
  | { kind: "nothing" }
  /** Its commits were checkpointed into the database through this process's connection. */
  | { kind: "saved"; commits: number; frames: number }
  /** Not safe to save, and the caller (a close) asked not to be stopped for it: left as it was. */
  | { kind: "left"; reason: string };

/** SQLite's unix VFS: the PENDING byte every new SHARED lock passes through. */
const SQLITE_PENDING_BYTE = 0x40000000;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

export interface GhostFiles {
  path: string;
  guard: FileGuard;
  /** The writer connection on the removed generation (undefined: none is open). */
  writer: Connection | undefined;
  /** Any connection on it, for the copy when nothing can be saved. */
  any: Connection | undefined;
}

/** Save what only the removed WAL holds, or throw HEARTH_GENERATION_LOST after keeping a copy. */
export function saveGhostWal(
  files: GhostFiles,
  whenUnsafe: "throw" | "leave" = "throw",
): GhostOutcome {
  const { guard } = files;
  if (!guard.walMode) return { kind: "nothing" };
  try {
    guard.check(); // sets isGhost when the files went since the last check
  } catch {
    // HEARTH_GENERATION_CHANGED: isGhost now says so
  }
  if (!guard.isGhost) return { kind: "nothing" };
  const index = new WalIndexReader().read(guard.shmFd);
  if (index && index.frames <= index.backfilled) return { kind: "nothing" };
  const unsaved = index ? countCommits(guard.walFd, index) : undefined;
  const fd = guard.writableDbFd();
  let why = index ? undefined : "its wal-index cannot be read";
  if (!why && !files.writer) why = "this process has no writer connection on it";
  if (!why && fd === undefined) why = "the database cannot be opened for writing under its name";
  if (!why && !fsx.tryLock(fd!, SQLITE_PENDING_BYTE, 1))
    why = "another connection is taking a lock on the database";
  if (!why) {
    try {
      why = newcomer(files);
      if (!why && checkpointAll(files.writer!)) {
        fsyncSync(fd!);
        return { kind: "saved", commits: unsaved!.commits, frames: unsaved!.frames };
      }
      why ??= "a reader of the removed generation kept the checkpoint from finishing";
    } finally {
      fsx.unlock(fd!, SQLITE_PENDING_BYTE, 1);
    }
  }
  // A close() does not copy or throw: it saves what it safely can. The loud
  // path (a copy kept, HEARTH_GENERATION_LOST) is reopen()'s, the recovery.
  if (whenUnsafe === "leave") return { kind: "left", reason: why };
  throw lost(files, unsaved, why);
}

/**
 * Why someone may use the database through newer files (undefined: nobody
 * can, while PENDING is held): a new -wal or -shm under the names, or a
 * process holding a lock on the database but none on the removed -shm.
 */
function newcomer({ guard, path }: GhostFiles): string | undefined {
  for (const suffix of ["-wal", "-shm"]) {
    if (exists(path + suffix))
      return `a new ${suffix} exists: another process opened the database since`;
  }
  const db = guard.identity("");
  const shm = guard.identity("-shm");
  if (!db || !shm) return "the removed files' identities cannot be read";
  // /proc/locks comes in page-sized reads, each a snapshot of its own: a lock
  // taken or let go by anyone between two of them shifts the list, and a
  // line is skipped or shown twice (a stable 600 locks read as 580 to 621
  // beside one busy locker). One read could miss the very process this
  // check looks for; three, joined, all have to miss it. Every readable
  // process's fdinfo is joined too, as the holder census does (each
  // descriptor's locks in one small read, which cannot skip a lock that
  // stayed put); /proc/locks still shows the processes whose fdinfo this
  // user cannot read. A join can only add strangers: it never lets a save
  // through that one of the readings refuses.
  const reads: LockEntry[][] = [];
  try {
    for (let i = 0; i < LOCK_READS; i++) reads.push(readKernelLocks(path));
  } catch {
    return "/proc/locks cannot be read";
  }
  reads.push([...new ProcCensus().fdinfoLocks().values()].flat());
  const stranger = strangerOn(reads, db, shm, process.pid);
  return stranger === undefined
    ? undefined
    : `process ${stranger} holds the database without the removed -shm`;
}

const LOCK_READS = 3;

/**
 * A process (not `self`) that holds a POSIX lock on the database, in any of
 * the reads, and a lock on the removed -shm in none of them: a process
 * using the database through newer files. OFD locks (pid -1) are hearth's
 * own presence and gate locks; SQLite's are POSIX.
 */
export function strangerOn(
  reads: LockEntry[][],
  db: { dev: number; ino: number },
  shm: { dev: number; ino: number },
  self: number,
): number | undefined {
  const on = (id: { dev: number; ino: number }) => (l: LockEntry) =>
    l.device === lockDevice(id.dev) && l.inode === id.ino && l.pid > 0;
  const generation = new Set(reads.flatMap((locks) => locks.filter(on(shm)).map((l) => l.pid)));
  for (const locks of reads) {
    const stranger = locks.filter(on(db)).find((l) => l.pid !== self && !generation.has(l.pid));
    if (stranger) return stranger.pid;
  }
  return undefined;
}

function exists(path: string): boolean {
  try {
    return lstatOrNull(path) !== null;
  } catch {
    return true; // cannot tell: count it as there
  }
}

/** PASSIVE checkpoints until every frame is in the database (a reader of this generation may hold some back a moment). */
function checkpointAll(writer: Connection): boolean {
  for (let attempt = 0; attempt < 50; attempt++) {
    const [row] = writer.db.pragma("wal_checkpoint(PASSIVE)") as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    if (row && row.busy === 0 && row.checkpointed === row.log) return true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  return false;
}

/** Commit frames (and all frames) past the last checkpoint, read from the removed WAL itself. */
function countCommits(walFd: number, index: WalIndex): { commits: number; frames: number } {
  const header = Buffer.alloc(FRAME_HEADER);
  let commits = 0;
  for (let frame = index.backfilled; frame < index.frames; frame++) {
    const at = WAL_HEADER + frame * (index.pageSize + FRAME_HEADER);
    if (readSync(walFd, header, 0, FRAME_HEADER, at) !== FRAME_HEADER) break;
    if (header.readUInt32BE(4) !== 0) commits++; // the database size after a commit frame
  }
  return { commits, frames: index.frames - index.backfilled };
}

function lost(
  files: GhostFiles,
  unsaved: { commits: number; frames: number } | undefined,
  why: string,
): HearthError {
  const what = unsaved
    ? `${unsaved.commits} commit(s) (${unsaved.frames} WAL frames) that only the removed -wal held`
    : "commits that only the removed -wal may have held";
  const copy = keepCopy(files);
  return new HearthError(
    "HEARTH_GENERATION_LOST",
    `the -wal of ${files.path} was removed under this process with ${what}, and they cannot be put back into the database (${why})${copy.path ? `; the database as this process saw it, those commits included, is kept at ${copy.path}` : `; no copy could be kept (${copy.error})`}`,
    {
      resource: files.path,
      details: { ...unsaved, copy: copy.path ?? null, reason: why },
      hint: "stop every process of this profile, compare the copy with the store (hearth doctor lists it) and restore what you need from it; call store.reopen() again to go on without those commits",
    },
  );
}

/** VACUUM INTO a new 0600 file beside the store, from the connection that still sees the removed WAL. */
function keepCopy(files: GhostFiles): { path?: string; error?: string } {
  const conn = files.writer ?? files.any;
  if (!conn) return { error: "no connection on the removed generation is open" };
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const path = `${files.path}.ghost-${stamp}-${process.pid}`;
  try {
    closeSync(openExclusive(path)); // 0600, O_EXCL|O_NOFOLLOW: VACUUM INTO fills an empty file
    conn.db.prepare("VACUUM INTO ?").run(path);
    return { path };
  } catch (err) {
    return { error: String((err as Error).message ?? err) };
  }
}

/**
 * When a database entry saves what a removed WAL holds: before reopen()
 * (loud: a loss is thrown once, with its copy; the next reopen goes on
 * without it) and before its writer closes (quiet: saved when safe, else
 * left, never thrown or copied).
 */
export class GhostWalKeeper {
  /** A reopen() reported HEARTH_GENERATION_LOST: the next one reattaches without trying again. */
  private lossReported = false;

  beforeReopen(files: GhostFiles | undefined): GhostOutcome {
    if (!files || this.lossReported) {
      this.lossReported = false;
      return { kind: "nothing" };
    }
    try {
      return saveGhostWal(files);
    } catch (err) {
      if (isHearthError(err, "HEARTH_GENERATION_LOST")) this.lossReported = true;
      throw err;
    }
  }

  beforeWriterCloses(files: GhostFiles | undefined): void {
    if (!files || this.lossReported) return;
    try {
      saveGhostWal(files, "leave");
    } catch {
      // A save that failed part-way wrote nothing it acknowledged; the close goes on.
    }
  }
}

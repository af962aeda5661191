import { fsync, readSync } from "node:fs";
import { endianness } from "node:os";
import { HearthError } from "../../errors.js";
import { failpoint, failpointFails } from "../../failpoints.js";
import type { FileGuard } from "../../files/guard.js";
import type { InodeLocks } from "../../process/inode-locks.js";
import type { OffLoopMode } from "../connection.js";
import type { MergeDebt } from "../fts-merge.js";
import type { OffLoopReason } from "../types.js";
import { type CheckpointResult, checkpointOffLoop, checkpointThreadUp } from "./checkpointer.js";
import { FsyncPolicy, type FsyncPolicyOptions } from "./policy.js";

/** Where SQLite's wal-index header keeps mxFrame (frames in the WAL), in the -shm file. */
const MX_FRAME_OFFSET = 16;

/**
 * How many thresholds of frames past the last checkpoint the WAL may hold
 * while the thread's checkpoint has not run, before the writer checkpoints
 * on its own connection instead (`checkpointHere`).
 */
export const OVERDUE_THRESHOLDS = 4;

/**
 * Chunks of owed search-index merge one checkpoint job may do: more than
 * one lets the thread catch up after checkpoints that ran on the writer's
 * own connection (which never merges: that would be on its loop).
 */
const CATCH_UP_CHUNKS = 3;

/** What a WalSync needs of its database entry (src/store/registry.ts). */
export interface WalSyncHost {
  readonly path: string;
  readonly key: string;
  readonly guard: FileGuard | undefined;
  readonly locks: InodeLocks;
  /** Search-index merges owed, merged by the checkpoint thread before a checkpoint. */
  readonly searchMerges: MergeDebt;
}

export interface WalSyncOptions {
  /**
   * A commit's fsync may move here (synchronous FULL), where `policy` says;
   * false at NORMAL.
   */
  fsync: boolean;
  policy: FsyncPolicyOptions;
  /** The synchronous level the checkpoint runs with (its own syncs of WAL and database). */
  synchronous: string;
  /** WAL frames past the last checkpoint before the next one starts. */
  pages: number;
  /** journal_size_limit: a larger WAL file is truncated by the thread's checkpoint (-1: never). */
  truncateAbove: number;
  /** How long a checkpoint waits for the write lock before it is skipped. */
  patienceMs: number;
  /**
   * A PASSIVE checkpoint on the writer's own connection, on this thread (what
   * SQLite's automatic checkpoint would do); its result. For a checkpoint
   * the thread has not run when the WAL is overdue.
   */
  checkpointHere: () => CheckpointResult;
}

/**
 * The slow halves of a commit, taken off the writer's event loop (issue 15:
 * no hearth process freezes).
 *
 * A write transaction on the store's write path commits with SQLite's own
 * WAL fsync and automatic checkpoint switched off (Connection.transaction's
 * `offLoop`), then comes here before the write is acknowledged:
 *
 * - fsync: the WAL is fsynced on the libuv pool, and the write resolves only
 *   after that fsync returns. Requests that arrive while one is running
 *   share the next one (an fsync covers what was written before it began).
 *   Acknowledged writes are exactly as durable as at synchronous FULL;
 *   other connections may see a commit a few milliseconds before it is on
 *   disk (docs/durability.md).
 * - checkpoint: when the WAL has grown `pages` frames past the last
 *   checkpoint, a PASSIVE checkpoint runs on the checkpoint thread while
 *   this process holds the write lock (its writers wait asynchronously), so
 *   it can finish and the next commit starts the WAL over, as an automatic
 *   checkpoint would.
 */
export class WalSync {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private checkpoint: Promise<void> | undefined;
  private backfilled = 0;
  private readonly header = Buffer.alloc(4);
  /** Where each commit's fsync runs (only with `fsync`). */
  readonly policy: FsyncPolicy | undefined;

  constructor(
    private readonly host: WalSyncHost,
    readonly options: WalSyncOptions,
  ) {
    this.policy = options.fsync ? new FsyncPolicy(options.policy) : undefined;
  }

  /**
   * How the next write-path commit runs: "pool" when its fsync leaves the
   * loop (the policy's call, and always while an fsync of ours is running:
   * SQLite's would queue behind it on the loop), else "loop"; and why.
   */
  commitMode(): { mode: OffLoopMode; reason: OffLoopReason } {
    const policy = this.policy;
    if (!policy) return { mode: "loop", reason: null };
    const reason = this.running ? "fsync-running" : policy.offLoop() ? policy.last : null;
    return { mode: reason ? "pool" : "loop", reason };
  }

  /**
   * After a commit made as `commitMode()` said, which held the loop for
   * `heldMs` (its COMMIT statement `commitMs` of it): resolves when the
   * write may be acknowledged.
   */
  afterCommit(
    { mode, reason }: { mode: OffLoopMode; reason: OffLoopReason },
    heldMs: number,
    commitMs: number,
  ): Promise<void> | undefined {
    const guard = this.host.guard;
    if (!guard) return Promise.reject(this.gone());
    this.policy?.committed({ on: mode, reason }, heldMs, commitMs);
    this.maybeCheckpoint(guard);
    return mode === "pool" ? this.sync(guard) : undefined;
  }

  /** Resolves once no checkpoint of this process is running (before a park or close). */
  async settled(): Promise<void> {
    await this.checkpoint;
  }

  private sync(guard: FileGuard): Promise<void> {
    if (!this.running) {
      const started = performance.now();
      this.running = fsyncWal(guard).finally(() => {
        this.running = undefined;
        this.policy?.synced(performance.now() - started);
      });
      return this.running;
    }
    // An fsync already running may have begun before this commit wrote: wait for the next one.
    this.queued ??= this.running.then(
      () => this.next(guard),
      () => this.next(guard),
    );
    return this.queued;
  }

  private next(guard: FileGuard): Promise<void> {
    this.queued = undefined;
    return this.sync(guard);
  }

  private maybeCheckpoint(guard: FileGuard): void {
    const frames = this.frames(guard);
    if (frames !== undefined && frames < this.backfilled) this.backfilled = 0; // the WAL started over
    // When the WAL's length cannot be read, checkpoint anyway: with SQLite's
    // automatic checkpoint off, skipping would let the WAL grow without bound.
    const behind = frames === undefined ? Number.POSITIVE_INFINITY : frames - this.backfilled;
    if (behind < this.options.pages) return;
    if (this.checkpoint || !checkpointThreadUp()) {
      // A checkpoint of ours is waiting for the write lock, or the thread is
      // still starting (it is asked again at the next commit). The WAL must
      // not grow without bound meanwhile (a thread that never comes up, a
      // lock that never frees): past OVERDUE_THRESHOLDS, this commit's
      // writer checkpoints on its own connection, on this thread, as
      // SQLite's automatic checkpoint would.
      if (behind >= OVERDUE_THRESHOLDS * this.options.pages) this.checkpointedHere(frames);
      return;
    }
    const { path, key, locks, searchMerges } = this.host;
    let merge = 0;
    this.checkpoint = locks.writeLock
      .run(() => {
        // Taken once the lock is held: a job that never runs merges nothing, and owes it still.
        merge = searchMerges.take(CATCH_UP_CHUNKS);
        const { synchronous, truncateAbove } = this.options;
        return checkpointOffLoop({ path, key, synchronous, merge, truncateAbove });
      }, this.options.patienceMs)
      .then(
        (result: CheckpointResult) => {
          // A job that did not run (the thread died, the file was not the
          // writer's) merged nothing: the next job owes its chunks.
          if (!result.ok) searchMerges.giveBack(merge);
          this.recordCheckpoint(result, frames);
        },
        () => {
          // No lock (nothing taken), or no job posted after the chunks were taken.
          searchMerges.giveBack(merge);
          this.backfilled = frames ?? this.backfilled;
        },
      )
      .finally(() => {
        this.checkpoint = undefined;
      });
  }

  private checkpointedHere(frames: number | undefined): void {
    let result: CheckpointResult;
    try {
      result = this.options.checkpointHere();
    } catch (err) {
      result = { ok: false, message: (err as Error).message };
    }
    this.recordCheckpoint(result, frames);
  }

  /**
   * A checkpoint that could not run, or stopped at a reader's snapshot (a
   * backup), is tried again after another `pages` frames: counting from
   * what it checkpointed would ask again at the very next commit (and,
   * with the thread's checkpoint pending, checkpoint on the loop at every
   * commit while the reader lasts).
   */
  private recordCheckpoint(result: CheckpointResult, frames: number | undefined): void {
    if (result.ok && result.merged !== undefined) this.host.searchMerges.record(result.merged);
    const whole = result.ok && result.checkpointed >= result.log;
    this.backfilled = whole ? Math.max(result.checkpointed, 0) : (frames ?? this.backfilled);
  }

  /** Frames in the WAL now, from the wal-index header in -shm (undefined when unreadable). */
  private frames(guard: FileGuard): number | undefined {
    try {
      if (readSync(guard.shmFd, this.header, 0, 4, MX_FRAME_OFFSET) !== 4) return undefined;
    } catch {
      return undefined;
    }
    return endianness() === "LE" ? this.header.readUInt32LE(0) : this.header.readUInt32BE(0);
  }

  private gone(): HearthError {
    return new HearthError("HEARTH_STORE_CLOSED", `${this.host.path} was closed during the write`, {
      resource: this.host.path,
      hint: "reopen the store; the write committed but its durability could not be confirmed",
    });
  }
}

function fsyncWal(guard: FileGuard): Promise<void> {
  const fd = guard.walFd;
  failpoint("write.before-fsync");
  return new Promise((resolve, reject) => {
    fsync(fd, (syncError) => {
      const err = failpointFails("wal.fsync") ? injectedEio() : syncError;
      if (!err) return resolve();
      reject(
        new HearthError(
          "HEARTH_SYNC_FAILED",
          `the write reached ${guard.dbPath}-wal but fsync failed (${err.code ?? err.message}): it may not survive a power loss`,
          {
            resource: `${guard.dbPath}-wal`,
            cause: err,
            hint: "check the disk (dmesg) and run hearth doctor; treat this write as possibly lost",
          },
        ),
      );
    });
  });
}

function injectedEio(): NodeJS.ErrnoException {
  return Object.assign(new Error("EIO: i/o error, fsync (failpoint wal.fsync)"), { code: "EIO" });
}

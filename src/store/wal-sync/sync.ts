import { fsync, readSync } from "node:fs";
import { endianness } from "node:os";
import { HearthError } from "../../errors.js";
import { failpoint, failpointFails } from "../../failpoints.js";
import type { FileGuard } from "../../files/guard.js";
import type { OffLoopMode } from "../connection.js";
import type { OffLoopReason } from "../types.js";
import { checkpointThreadFailing } from "./checkpointer.js";
import { type CheckpointHost, type CheckpointOptions, Checkpoints } from "./checkpoints.js";
import { FsyncPolicy, type FsyncPolicyOptions } from "./policy.js";

/** Where SQLite's wal-index header keeps mxFrame (frames in the WAL), in the -shm file. */
const MX_FRAME_OFFSET = 16;

/** What a WalSync needs of its database entry (src/store/registry.ts). */
export type WalSyncHost = CheckpointHost;

export interface WalSyncOptions extends CheckpointOptions {
  /**
   * A commit's fsync may move here (synchronous FULL), where `policy` says;
   * false at NORMAL.
   */
  fsync: boolean;
  policy: FsyncPolicyOptions;
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
 *   checkpoint, the checkpoint thread copies it into the database, most of
 *   it while this process goes on committing, the rest while it holds the
 *   write lock (its writers wait asynchronously), so the checkpoint is whole
 *   and the next commit starts the WAL over, as an automatic checkpoint
 *   would (src/store/wal-sync/checkpoints.ts).
 */
export class WalSync {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly checkpoints: Checkpoints;
  private readonly header = Buffer.alloc(4);
  /** Where each commit's fsync runs (only with `fsync`). */
  readonly policy: FsyncPolicy | undefined;

  constructor(
    private readonly host: WalSyncHost,
    readonly options: WalSyncOptions,
  ) {
    this.policy = options.fsync ? new FsyncPolicy(options.policy) : undefined;
    this.checkpoints = new Checkpoints(host, options);
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
    this.checkpoints.afterCommit(this.frames(guard));
    return mode === "pool" ? this.sync(guard) : undefined;
  }

  /**
   * Whether the checkpoint thread merges the search index (its final jobs
   * do). Not while the thread fails (to start, or threads keep dying in
   * their jobs): the writer then merges in its own transactions, as without
   * a WalSync, so the debt cannot grow forever.
   */
  get threadMerges(): boolean {
    return !checkpointThreadFailing();
  }

  /** Resolves once no checkpoint of this process is running (before a park or close). */
  settled(): Promise<void> {
    return this.checkpoints.settled();
  }

  /** Resolves once no checkpoint passes of this process run (before its own structural operation). */
  quiet(): Promise<void> {
    return this.checkpoints.quiet();
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

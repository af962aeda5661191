import { fsync } from "node:fs";
import type { HearthConfig } from "../../../config/schema.js";
import { HearthError } from "../../../errors.js";
import { failpoint, failpointFails } from "../../../failpoints.js";
import type { FileGuard } from "../../../files/guard.js";
import type { OffLoopReason } from "../../types.js";
import type { Connection, OffLoopMode } from "../connection.js";
import { checkpointThreadFailing } from "./checkpointer.js";
import { type CheckpointHost, type CheckpointOptions, Checkpoints } from "./checkpoints.js";
import { FSYNC_POLICY, FsyncPolicy, type FsyncPolicyOptions } from "./policy.js";
import { checkpointModeFor } from "./wal-checkpoint.js";
import { type WalIndex, WalIndexReader } from "./wal-index.js";
import type { WalLength } from "./wal-length.js";

/**
 * A database larger than this never checkpoints (nor merges its search
 * index) inside a commit: its pages are less likely to be in memory, and
 * FTS5's merges on a store of a million messages took 30–170 ms each
 * (docs/durability.md).
 */
const INLINE_MAX_DB_BYTES = 64 * 1024 * 1024;

/**
 * From a group commit of two or more writes until this long after its fsync
 * returned, "batches are committing": a write outside them shares the next
 * batch's fsync (issue 44).
 */
const GROUP_MS = 100;
/** A write outside the batches waits at most this long for the next batch's fsync, then fsyncs itself. */
const FOLLOW_MS = 20;

/**
 * How a write-path commit runs beside a WalSync: an OffLoopMode
 * (Connection.transaction), or "inline": exactly as SQLite would without
 * hearth, its fsync and any automatic checkpoint inside the commit, the
 * search-index merge inside the transaction.
 */
export interface CommitHow {
  mode: OffLoopMode | "inline";
  reason: OffLoopReason;
  /** A write outside the batches while they commit: acknowledged by the next fsync anyone starts. */
  follow?: true;
  /** A group commit of two or more writes: batches are committing until GROUP_MS after its fsync. */
  batch?: true;
}

/** What a WalSync needs of its database entry (src/store/sqlite/registry.ts). */
export interface WalSyncHost extends CheckpointHost {
  /** Told the WAL's length after each commit (continuous replication watches it). */
  readonly walLength: WalLength;
}

export interface WalSyncOptions extends CheckpointOptions {
  /**
   * A commit's fsync may move here (synchronous FULL), where `policy` says;
   * false at NORMAL.
   */
  fsync: boolean;
  policy: FsyncPolicyOptions;
  /**
   * A commit whose fsync the policy keeps on the loop also checkpoints
   * there, as SQLite would ("inline"), unless the thread's checkpoint is
   * under way (durability.checkpointOffLoop "with-fsync").
   */
  inlineCheckpoints: boolean;
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
 *   would (src/store/sqlite/wal-sync/checkpoints.ts).
 */
export class WalSync {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly checkpoints: Checkpoints;
  private readonly walIndex = new WalIndexReader();
  /** The last commit left the next one free to checkpoint inline (inlineFits). */
  private inlineNext = false;
  /** The WAL file was found past truncateAbove when the thread had made this many whole checkpoints. */
  private grewAt: number | undefined;
  private lastMode: CommitHow["mode"] | undefined;
  /** Until then, writes outside group commits follow the batches' fsyncs (GROUP_MS after the last batch). */
  private groupedUntil = Number.NEGATIVE_INFINITY;
  /** Commits waiting for the next fsync to start (follow()); FOLLOW_MS at most. */
  private followers:
    | {
        done: Promise<void>;
        resolve: () => void;
        reject: (e: Error) => void;
        timer: NodeJS.Timeout;
      }
    | undefined;
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
   * SQLite's would queue behind it on the loop), and why; else "inline"
   * when its checkpoint may stay in the commit too (inlineFits, judged after
   * the last commit, and still no checkpoint of the thread's under way),
   * else "loop". `queued`: other writes wait in this process behind this one.
   *
   * `grouped`: the commit is a group commit of that many writes
   * (appendMany). One of two or more (or of one, while batches are
   * committing) always leaves its fsync to the pool
   * ("group-commit"): the loop takes in the next batch meanwhile, and the
   * writes outside the batches that commit then (a new chat's session, a
   * title) follow it: they are acknowledged by the next fsync that starts,
   * usually the next batch's, instead of each making one of its own.
   */
  commitMode(queued = false, grouped = 0): CommitHow {
    const policy = this.policy;
    if (!policy) return { mode: "loop", reason: null };
    const now = performance.now();
    // A batch of one while batches are committing leaves too: it carries the followers' fsync.
    // Only a batch of two or more keeps batches committing (a lone writer after a burst is not).
    const batch = grouped >= 2 || (grouped === 1 && now < this.groupedUntil);
    if (grouped >= 2) this.groupedUntil = now + GROUP_MS;
    const follow = grouped === 0 && now < this.groupedUntil;
    const reason = this.running
      ? "fsync-running"
      : policy.offLoop(now, queued || batch || follow)
        ? policy.last
        : batch || follow
          ? "group-commit"
          : null;
    if (reason) {
      if (follow) return { mode: "pool", reason, follow };
      return grouped >= 2 ? { mode: "pool", reason, batch: true } : { mode: "pool", reason };
    }
    return { mode: this.inlineNext && this.checkpoints.idle ? "inline" : "loop", reason };
  }

  /**
   * After a commit made as `commitMode()` said, which held the loop for
   * `heldMs` (its COMMIT statement `commitMs` of it): resolves when the
   * write may be acknowledged.
   */
  afterCommit(how: CommitHow, heldMs: number, commitMs: number): Promise<void> | undefined {
    const { mode, reason } = how;
    const guard = this.host.guard;
    if (!guard) return Promise.reject(this.gone());
    this.lastMode = mode;
    this.policy?.committed({ on: mode === "pool" ? "pool" : "loop", reason }, heldMs, commitMs);
    const index = this.walIndex.read(guard.shmFd);
    this.inlineNext = index !== undefined && this.inlineFits(index);
    if (mode === "inline") this.checkpoints.afterInline(index?.backfilled);
    else this.checkpoints.afterCommit(index, guard.shmFd);
    if (index) this.host.walLength.committed(index.frames);
    // Followers never count on a commit's own fsync on the loop: a commit that changed nothing has none.
    if (mode !== "pool") return undefined;
    if (how.follow) return this.follow();
    const synced = this.sync(guard);
    if (how.batch) {
      // A slow fsync (a loaded disk) must not end "batches are committing" before the next batch forms.
      const later = () => {
        this.groupedUntil = performance.now() + GROUP_MS;
      };
      synced.then(later, later);
    }
    return synced;
  }

  /**
   * Whether the next commit may checkpoint inline, by the wal-index after
   * this one: a database of INLINE_MAX_DB_BYTES or less, a WAL no more
   * than two thresholds long (a longer one is a backlog, a copy of many
   * pages), no checkpoint of the thread's under way, and no WAL file found
   * past `truncateAbove` since the thread's last whole checkpoint. SQLite
   * cuts such a file back inside the commit that starts the WAL over (70–120
   * ms on the loop after a backup of 1 GB); the thread's TRUNCATE
   * checkpoint does it instead. The file's size is read only when the next
   * commit starts the WAL over (every frame in it checkpointed): once per
   * checkpoint, not per commit, since a stat of the -wal dirties its inode
   * at the next commit (src/files/guard.ts). It finds a file grown by any
   * process, this one or another.
   */
  private inlineFits(index: WalIndex): boolean {
    const { pages, truncateAbove } = this.options;
    const whole = this.checkpoints.wholeCheckpoints;
    if (this.grewAt !== undefined && whole > this.grewAt) this.grewAt = undefined;
    const fits =
      this.options.inlineCheckpoints &&
      this.checkpoints.idle &&
      index.dbBytes <= INLINE_MAX_DB_BYTES &&
      index.frames <= 2 * pages &&
      this.grewAt === undefined;
    if (!fits) return false;
    const startsOver = index.frames > 0 && index.backfilled >= index.frames;
    if (startsOver && checkpointModeFor(this.host.path, truncateAbove) === "TRUNCATE") {
      this.grewAt = whole;
      return false;
    }
    return true;
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

  /**
   * Where the last write-path commit left its checkpoint: "commit" (inline,
   * SQLite's automatic one, and its search-index merge in the transaction),
   * or "thread"; null before the first.
   */
  get lastCheckpoint(): "commit" | "thread" | null {
    return this.lastMode === undefined ? null : this.lastMode === "inline" ? "commit" : "thread";
  }

  /** Resolves once no checkpoint of this process is running (before a park or close); waiting followers fsync now. */
  async settled(): Promise<void> {
    if (this.followers) await this.syncFollowers().catch(() => undefined);
    return this.checkpoints.settled();
  }

  /** Resolves once no checkpoint passes of this process run (before its own structural operation). */
  quiet(): Promise<void> {
    return this.checkpoints.quiet();
  }

  /**
   * A follower's commit is written: it is acknowledged by the next fsync
   * that starts (it covers the commit), whoever starts it; after FOLLOW_MS
   * without one, it starts one itself.
   */
  private follow(): Promise<void> {
    if (!this.followers) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const timer = setTimeout(() => void this.syncFollowers().catch(() => undefined), FOLLOW_MS);
      this.followers = { done, resolve, reject, timer };
    }
    return this.followers.done;
  }

  /** The followers' own fsync (no batch came in time, or the store parks). */
  private syncFollowers(): Promise<void> {
    const waiting = this.followers?.done;
    const guard = this.host.guard;
    if (!guard) this.releaseFollowers()?.reject(this.gone());
    else void this.sync(guard).catch(() => undefined);
    return waiting ?? Promise.resolve();
  }

  /** The followers waiting now, no longer waiting (the caller settles them). */
  private releaseFollowers() {
    const f = this.followers;
    if (!f) return undefined;
    clearTimeout(f.timer);
    this.followers = undefined;
    return f;
  }

  private sync(guard: FileGuard): Promise<void> {
    if (!this.running) {
      const started = performance.now();
      if (this.policy) this.policy.poolFsyncs++;
      // Every follower committed before this fsync begins: it covers them too.
      const followers = this.releaseFollowers();
      this.running = fsyncWal(guard).finally(() => {
        this.running = undefined;
        this.policy?.synced(performance.now() - started);
      });
      if (followers) this.running.then(followers.resolve, followers.reject);
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

/**
 * The writer's commits leave their fsync (at FULL) and their checkpoints to
 * a WalSync, unless durability.syncOffLoop is false or the level is OFF
 * (nothing to sync) or EXTRA (SQLite keeps every sync in the commit).
 */
export function walSyncFor(
  entry: WalSyncHost,
  conn: Connection,
  config: HearthConfig,
): WalSync | undefined {
  const level = config.durability.synchronous;
  if (!config.durability.syncOffLoop || (level !== "full" && level !== "normal")) return undefined;
  conn.allowOffLoop(level === "full", config);
  return new WalSync(entry, {
    fsync: level === "full",
    synchronous: level,
    pages: config.durability.walAutocheckpointPages,
    truncateAbove: config.durability.journalSizeLimitBytes,
    policy: FSYNC_POLICY,
    inlineCheckpoints: config.durability.checkpointOffLoop === "with-fsync",
    checkpointHere: (truncateAbove) => conn.checkpointHere(truncateAbove),
    patienceMs: config.store.busyTimeoutMs,
  });
}

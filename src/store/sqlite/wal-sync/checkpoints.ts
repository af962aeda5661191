import type { FileGuard } from "../../../files/guard.js";
import { inodeKey } from "../../../files/inspect.js";
import type { InodeLocks } from "../../../process/inode-locks.js";
import type { MergeDebt } from "../fts-merge.js";
import {
  type CheckpointResult,
  checkpointOffLoop,
  checkpointThreadFailing,
  checkpointThreadUp,
} from "./checkpointer.js";
import { pagesToCopy, type WalIndex } from "./wal-index.js";

/**
 * How many thresholds of frames past the last checkpoint the WAL may hold
 * while the thread's checkpoint has not run, before the writer checkpoints
 * on its own connection instead (`checkpointHere`).
 */
const OVERDUE_THRESHOLDS = 4;

/**
 * Chunks of owed search-index merge one checkpoint may do: more than one
 * lets the thread catch up after checkpoints that ran on the writer's own
 * connection (which never merges: that would be on its loop).
 */
const CATCH_UP_CHUNKS = 3;

/** At most this many passes before the final job (each copies what the last one left). */
const MAX_PASSES = 8;

/**
 * Thresholds of frames past the last checkpoint at which a writer asks for
 * the final job while the passes still run: one that writes faster than
 * they copy would otherwise grow the WAL for as long as they last.
 */
const PASSES_OUTPACED = 3;

/**
 * A WAL still this many thresholds long once the final job copied all of it
 * is held by readers from before the copy; the final job then waits for
 * them, up to READER_WAIT_MS (why: checkpointer.ts, the final job's
 * restartFrames). Not sooner: each wait holds the writers, and beside a
 * reader of whole 100,000-message transcripts waits from 2 thresholds on
 * took the gateway's p99 turn latency from 1.4–1.6× to 1.9–2.4× of its
 * figure without the reader.
 */
const HELD_THRESHOLDS = 8;
/** How long a final job waits for the readers holding the WAL (the writers wait as long for the lock). */
const READER_WAIT_MS = 25;
/**
 * A wait the readers outlasted (a read of a whole 100,000-message
 * transcript holds its snapshot for hundreds of ms) doubles the length the
 * WAL must reach before the next wait, up to this many thresholds; a wait
 * that started the WAL over puts it back to HELD_THRESHOLDS. Without it,
 * every checkpoint beside such a reader held the writers 25 ms in vain.
 */
const HELD_THRESHOLDS_MAX = 64;
/**
 * Once the WAL is HELD_THRESHOLDS_MAX thresholds long, a wait the readers
 * outlast doubles the wait instead, up to this long: at the cap every
 * checkpoint waits, and readers that outlast 25 ms each time (a starved
 * machine, or reads of tens of ms back to back) would otherwise grow the
 * WAL by a threshold per checkpoint for as long as they read (issue 41: a
 * run beside a CPU hog, 3,439 frames against 3,200). A longer wait holds
 * the writers longer, but only in a state where the WAL has no bound
 * without it; a wait that starts the WAL over puts both back.
 */
const READER_WAIT_MAX_MS = 200;

/** The passes id of a checkpoint without passes (job ids start at 1): its final job opens a connection. */
const NO_PASSES = 0;
/** The done flag of a checkpoint without passes: over from the start. */
const PASSES_OVER = new Int32Array([1]);

/** What the checkpoints of a WalSync need of its database entry (src/store/sqlite/registry.ts). */
export interface CheckpointHost {
  readonly path: string;
  readonly key: string;
  readonly guard: FileGuard | undefined;
  readonly locks: InodeLocks;
  /** Search-index merges owed, merged by the checkpoint thread before a checkpoint. */
  readonly searchMerges: MergeDebt;
}

export interface CheckpointOptions {
  /** The synchronous level the checkpoint runs with (its own syncs of WAL and database). */
  synchronous: string;
  /** WAL frames past the last checkpoint before the next one starts. */
  pages: number;
  /** journal_size_limit: a larger WAL file is truncated by the thread's checkpoint (-1: never). */
  truncateAbove: number;
  /** How long a checkpoint's final job waits for the write lock before it is skipped. */
  patienceMs: number;
  /**
   * A checkpoint on the writer's own connection, on this thread (what
   * SQLite's automatic checkpoint would do: PASSIVE, or TRUNCATE when the
   * WAL file is past the `truncateAbove` given, which the off-loop commits
   * never cut; -1 when the thread is only late, and will cut it);
   * its result. For a checkpoint the thread has not run when the WAL is
   * overdue.
   */
  checkpointHere: (truncateAbove: number) => CheckpointResult;
}

/** A checkpoint's passes, running or done, whose final job is not asked yet. */
interface Passes {
  id: number;
  /** Set to 1 by the thread when the passes are over. */
  done: Int32Array;
  /** The WAL's length when they started. */
  frames: number | undefined;
  /** Settles once the thread has replied: it runs none of them any more. */
  over: Promise<void>;
}

/**
 * The WAL checkpoints of one writer, on the checkpoint thread: when the WAL
 * has grown `pages` frames past the last checkpoint, the thread copies it
 * into the database in passes while this process goes on committing, then
 * (once the passes are over: the thread's flag, read at each commit, or its
 * reply) copies the rest in a final job under this process's write lock
 * (its writers wait asynchronously), so the checkpoint is whole and the
 * next commit starts the WAL over, as an automatic checkpoint would. The
 * writer waits only for the frames committed during the passes, not for
 * the whole copy.
 */
export class Checkpoints {
  private passes: Passes | undefined;
  private final: Promise<void> | undefined;
  private backfilled = 0;
  /** Thresholds of WAL left after a whole copy from which the final job waits for readers. */
  private heldThresholds = HELD_THRESHOLDS;
  /** How long the final job waits for those readers (READER_WAIT_MS, doubled at the cap). */
  private readerWaitMs = READER_WAIT_MS;
  private whole = 0;

  constructor(
    private readonly host: CheckpointHost,
    private readonly options: CheckpointOptions,
  ) {}

  /**
   * After a commit, with the wal-index header read now (undefined:
   * unreadable) and the -shm's descriptor, from which a checkpoint about to
   * start counts the distinct pages it would copy. Called at every commit:
   * it allocates nothing.
   */
  afterCommit(index: WalIndex | undefined, shmFd: number): void {
    const frames = index?.frames;
    if (frames !== undefined && frames < this.backfilled) this.backfilled = 0; // the WAL started over
    // When the WAL's length cannot be read, checkpoint anyway: with SQLite's
    // automatic checkpoint off, skipping would let the WAL grow without bound.
    const behind = frames === undefined ? Number.POSITIVE_INFINITY : frames - this.backfilled;
    const passes = this.passes;
    if (passes && !this.final) {
      // The passes are over, or this writer outpaces them: the rest under the
      // write lock (this writer waits for it at its next write).
      const over = Atomics.load(passes.done, 0) === 1;
      if (over || behind >= PASSES_OUTPACED * this.options.pages) this.finish(passes, frames);
      return;
    }
    if (behind < this.options.pages) return;
    const up = checkpointThreadUp();
    if (this.final || !up) {
      // A final job of ours waits for the write lock, or the thread is still
      // starting (it is asked again at the next commit). The WAL must not
      // grow without bound meanwhile (a thread that never comes up): past
      // OVERDUE_THRESHOLDS, this commit's writer checkpoints on its own
      // connection, on this thread, as SQLite's automatic checkpoint would.
      // Never while the thread is up: a final job waiting for the lock runs
      // once the writers queued before it in this process have committed
      // (the lock is FIFO) or its patience ends (then the next commit asks
      // again), so the WAL is bounded by those writes; a checkpoint here
      // held the loop 70 ms beside a backup (docs/durability.md).
      if (!up && behind >= OVERDUE_THRESHOLDS * this.options.pages) this.checkpointedHere(frames);
      return;
    }
    this.start(frames, index, shmFd);
  }

  /** Whole checkpoints of the thread's (or the writer's fallback) so far. */
  get wholeCheckpoints(): number {
    return this.whole;
  }

  /** No passes run and no final job waits: a commit may checkpoint inline. */
  get idle(): boolean {
    return this.passes === undefined && this.final === undefined;
  }

  /**
   * After an inline commit (SQLite's own automatic checkpoint in it), with
   * the frames the wal-index now says are checkpointed: what the thread
   * counts from once commits leave their checkpoints to it again.
   */
  afterInline(backfilled: number | undefined): void {
    if (backfilled !== undefined) this.backfilled = backfilled;
  }

  /** Resolves once no checkpoint of this process is running (before a park or close). */
  async settled(): Promise<void> {
    await this.quiet();
    await this.final;
  }

  /**
   * Resolves once the thread runs no passes of ours. Their reply asks for the
   * final job, which waits for the write lock: a structural operation of
   * this process, which holds the write queue, runs before it (the final job
   * checks the file again).
   */
  async quiet(): Promise<void> {
    await this.passes?.over;
  }

  private start(frames: number | undefined, index: WalIndex | undefined, shmFd: number): void {
    const { path, key } = this.host;
    const { synchronous, pages } = this.options;
    // A pass that copied an eighth of a threshold or less is the last: the
    // final job, under the write lock, copies up to that many frames.
    const finalFrames = Math.max(16, Math.floor(pages / 8));
    if (index && pagesToCopy(shmFd, index, finalFrames) <= finalFrames) {
      // The whole copy is no larger than what the final job may copy after
      // passes: the final job alone, as SQLite's automatic checkpoint would.
      // Passes would only copy the pages the writer keeps changing (a
      // session's row, the right edge of each index, the search index's
      // structure) once in a pass and again in the final job: 1.2 pages
      // copied per append against SQLite's 0.95 (issue 44).
      const passes: Passes = { id: NO_PASSES, done: PASSES_OVER, frames, over: Promise.resolve() };
      this.passes = passes;
      this.finish(passes, frames);
      return;
    }
    const done = new Int32Array(new SharedArrayBuffer(4));
    const { id, reply } = checkpointOffLoop({
      kind: "passes",
      path,
      key,
      ...this.sidecarKeys(),
      synchronous,
      finalFrames,
      // A writer faster than the passes: the final job comes before the WAL is overdue.
      growth: pages,
      maxPasses: MAX_PASSES,
      done,
    });
    // A writer that stopped committing learns here that the passes are over.
    const over = reply.then(() => {
      if (this.passes === passes && !this.final) this.finish(passes, passes.frames);
    });
    const passes: Passes = { id, done, frames, over };
    this.passes = passes;
  }

  /** Ask for the final job of `passes`, under the write lock. */
  private finish(passes: Passes, frames: number | undefined): void {
    if (!checkpointThreadUp()) {
      // The thread ended with the passes (their reply says so). No writer
      // waits for a new one to start: the next commit past the threshold
      // asks again, or checkpoints here once the WAL is overdue.
      if (this.passes === passes) this.passes = undefined;
      return;
    }
    const { path, key, locks, searchMerges } = this.host;
    const { synchronous, truncateAbove, patienceMs } = this.options;
    let merge = 0;
    this.final = locks.writeLock
      .run(() => {
        // Taken once the lock is held: a job that never runs merges nothing, and owes it still.
        merge = searchMerges.take(CATCH_UP_CHUNKS);
        const job = {
          path,
          key,
          ...this.sidecarKeys(),
          synchronous,
          merge,
          truncateAbove,
          restartFrames: this.heldThresholds * this.options.pages,
          readerWaitMs: this.readerWaitMs,
        };
        return checkpointOffLoop({ kind: "final", passesId: passes.id, ...job }).reply;
      }, patienceMs)
      .then(
        (result: CheckpointResult) => {
          // A job that did not run (the thread died, the file was not the
          // writer's) merged nothing: the next job owes its chunks.
          if (!result.ok) searchMerges.giveBack(merge);
          if (result.ok && result.waited) this.afterWait(result.busy === 0);
          this.recordCheckpoint(result, frames);
        },
        async () => {
          // No lock (nothing taken), or no job posted after the chunks were taken.
          searchMerges.giveBack(merge);
          this.backfilled = frames ?? this.backfilled;
          if (passes.id !== NO_PASSES)
            await checkpointOffLoop({ kind: "drop", passesId: passes.id }).reply;
        },
      )
      .finally(() => {
        this.final = undefined;
        if (this.passes === passes) this.passes = undefined;
      });
  }

  /** After a final job waited for readers: started over (back to the first wait), or outlasted. */
  private afterWait(startedOver: boolean): void {
    if (startedOver) {
      this.heldThresholds = HELD_THRESHOLDS;
      this.readerWaitMs = READER_WAIT_MS;
    } else if (this.heldThresholds < HELD_THRESHOLDS_MAX) {
      this.heldThresholds = Math.min(this.heldThresholds * 2, HELD_THRESHOLDS_MAX);
    } else {
      this.readerWaitMs = Math.min(this.readerWaitMs * 2, READER_WAIT_MAX_MS);
    }
  }

  /** The -wal and -shm this process's writer holds, for the thread to check (F3). */
  private sidecarKeys(): {
    walKey?: string;
    shmKey?: string;
    walLink?: { link: string; name: string };
  } {
    const guard = this.host.guard;
    if (!guard?.walMode) return {};
    const wal = guard.identity("-wal");
    const shm = guard.identity("-shm");
    const walLink = guard.walLink();
    return {
      ...(wal ? { walKey: inodeKey(wal) } : {}),
      ...(shm ? { shmKey: inodeKey(shm) } : {}),
      ...(walLink ? { walLink } : {}),
    };
  }

  private checkpointedHere(frames: number | undefined): void {
    // A WAL file grown past truncateAbove is cut here only when the thread
    // is down (checkpointThreadFailing): while it merely starts, or its
    // final job waits for the lock, its next whole checkpoint cuts the file
    // (a cut on this thread held the loop 70–120 ms after a large backup).
    // PASSIVE meanwhile bounds the WAL as well: the next commit starts it over.
    const truncateAbove = checkpointThreadFailing() ? this.options.truncateAbove : -1;
    let result: CheckpointResult;
    try {
      result = this.options.checkpointHere(truncateAbove);
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
    if (whole) this.whole++;
    this.backfilled = whole ? Math.max(result.checkpointed, 0) : (frames ?? this.backfilled);
  }
}

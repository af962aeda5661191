import { pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";
import { nodeWorkerThreads } from "../../../builtins.js";
import { builtFile } from "../../../files/built.js";

/** The database a job concerns. */
interface JobTarget {
  path: string;
  /** dev:ino of the database the writer holds: the thread refuses any other file. */
  key: string;
  /**
   * dev:ino of the -wal and -shm the writer holds, when it holds them: the
   * thread checks them before every checkpoint. A connection opened, or kept
   * by the passes, before another program removed the two files still sees
   * the removed WAL; its checkpoint would copy that WAL's frames into a
   * database that newer files already build on. Saving a removed WAL is
   * the writer's (src/store/sqlite/ghost-wal.ts), under the locks that make
   * it safe.
   */
  walKey?: string;
  shmKey?: string;
  /**
   * The writer's descriptor on the -wal as /proc/self/fd names it (the
   * thread shares the process's descriptors), and the name it read when
   * opened: while it still reads that name, the -wal at the path is the
   * writer's (FileGuard.walLink), checked so instead of a stat of the -wal
   * by path, which would make the writer's next commit fsync the -wal's
   * inode too (issue 44). Absent where /proc cannot tell: walKey then.
   */
  walLink?: { link: string; name: string };
  synchronous: string;
}

/**
 * A checkpoint comes in two jobs (issue 15: the writer must not wait for
 * the whole of it).
 *
 * - "passes", posted without the write lock: PASSIVE checkpoints while the
 *   writer goes on committing, each copying what the last one left (the
 *   frames committed meanwhile), until one has little left to copy, one
 *   stops short (a reader's snapshot, another checkpointer), or `maxPasses`.
 *   The thread then keeps its connection for the final job and sets
 *   `done[0]` to 1: a writer that never yields to the event loop sees that
 *   without the reply.
 * - "final", posted under the write lock: the search-index merge owed, then
 *   the last checkpoint, on the connection the passes kept (a new one if
 *   there is none). Nothing commits meanwhile, so it can copy every frame and
 *   the next commit starts the WAL over, as SQLite's automatic checkpoint
 *   would have; only the frames the passes left are copied with the writer
 *   waiting.
 *   A checkpoint whose whole copy is small (Checkpoints: no more distinct
 *   pages than a pass may leave) posts no passes: its final job names
 *   passes id 0, and opens its own connection.
 * - "drop": the final will not come (its write lock was not had in time):
 *   the connection the passes kept is closed.
 */
export type CheckpointJob = { id: number } & (
  | (JobTarget & {
      kind: "passes";
      /** A pass that copied this many frames or fewer is the last one. */
      finalFrames: number;
      /** No pass starts once the WAL has grown this many frames since the first. */
      growth: number;
      maxPasses: number;
      done: Int32Array;
    })
  | (JobTarget & {
      kind: "final";
      /** The passes job whose connection to use. */
      passesId: number;
      /** Pages of search-index merge to do first, under the same write lock (src/store/sqlite/fts-merge.ts); 0: none. */
      merge: number;
      /**
       * A WAL file larger than this (bytes; journal_size_limit) is truncated by
       * this checkpoint (TRUNCATE mode) instead of by the writer's next commit,
       * whose ftruncate of 100 MB froze its event loop for ~100 ms. -1: never.
       */
      truncateAbove: number;
      /**
       * A WAL still this many frames long once the checkpoint copied all of
       * it has readers from before the copy on it: the next commit appends
       * to it instead of starting it over, and under steady reads from
       * other processes it grew for as long as they lasted (two writers,
       * three readers: 168 MiB in 10 s; raw SQLite 499 MiB). The checkpoint
       * then waits up to `readerWaitMs` for those readers (RESTART, or
       * TRUNCATE past truncateAbove), so that the next commit starts the
       * WAL over.
       */
      restartFrames: number;
      readerWaitMs: number;
    })
  | { kind: "drop"; passesId: number }
);

/** A job as posted: the id is given by checkpointOffLoop. */
export type CheckpointJobSpec = WithoutId<CheckpointJob>;
type WithoutId<J> = J extends unknown ? Omit<J, "id"> : never;

export type CheckpointResult =
  | {
      ok: true;
      busy: number;
      log: number;
      checkpointed: number;
      /** Whether the merge asked for merged anything, or why it failed (the checkpoint ran anyway). */
      merged?: boolean | string;
      /** The final job waited for readers holding the WAL (busy 0: they left, and the WAL starts over). */
      waited?: boolean;
    }
  | { ok: false; message: string };

export type CheckpointReply = CheckpointResult & { id: number };

/** A thread with no checkpoint for this long ends (its V8 isolate is ~10 MB of RSS); the next checkpoint starts another. */
const IDLE_MS = 30_000;

/**
 * The one checkpoint thread of this process, shared by every store in it:
 * started on the first checkpoint, holding the process open only while it
 * starts and while a job is in flight, ended after IDLE_MS without a
 * job, and started again when needed or after it dies. Jobs run one at a
 * time, in order.
 */
let worker: Worker | undefined;
/**
 * Set to 1 by the current thread once it has loaded its script: read
 * without waiting for an event, so a writer that never yields to the event
 * loop (a loop of appends on resolved promises) still sees it.
 */
let up = new Int32Array(new SharedArrayBuffer(4));
let idleTimer: NodeJS.Timeout | undefined;
/** A thread that ended before it came up is not started again before this (Date.now()). */
let nextStart = 0;
/** The last thread ended before it came up, and none has come up since. */
let startFailed = false;
/** When the current thread was started (Date.now()). */
let startedAt = 0;
const RESTART_AFTER_MS = 1_000;
/**
 * A thread not up this long after its start counts as failing. They come
 * up in tens of ms on a quiet machine, but in hundreds when other
 * processes take the CPUs; at 1 s a start that only waited for a CPU (a
 * 2-CPU CI host, plus a failpoint's 600 ms) was taken for a dead thread,
 * and the writer cut a grown WAL file on its loop. Only a thread alive but
 * stuck in its start waits this long to be judged: one that exits is
 * failing at once. Meanwhile the writer's own PASSIVE checkpoints bound
 * the WAL all the same; only the cut of a grown file waits.
 */
const START_GRACE_MS = 3_000;
/**
 * Threads that came up and then died with a job in flight, since a final
 * job last succeeded. From CRASHES_FAILING on the thread counts as failing:
 * the final jobs, which merge the search index, do not finish then.
 */
let crashes = 0;
const CRASHES_FAILING = 2;
/** Ids of the final jobs posted and not answered yet. */
const finals = new Set<number>();
let nextId = 1;
const waiting = new Map<number, (reply: CheckpointResult) => void>();

/**
 * True while the thread fails: the last one ended before it came up and
 * none has come up since, or the current one is not up START_GRACE_MS after its
 * start (read without an event: a writer that never yields to the loop
 * never sees the exit), or threads keep dying in their jobs
 * (CRASHES_FAILING). Its final jobs, which merge the search index, do not
 * run then, so the writer merges in its own transactions.
 */
export function checkpointThreadFailing(): boolean {
  if (crashes >= CRASHES_FAILING) return true;
  if (Atomics.load(up, 0) === 1) return false;
  return startFailed || (worker !== undefined && Date.now() - startedAt > START_GRACE_MS);
}

/**
 * True once the checkpoint thread is running; starts it when none is. A
 * start (a V8 isolate, better-sqlite3: tens of milliseconds) held writers
 * when it happened under the write lock; a caller asks this first and takes
 * its write lock for a checkpoint only once the thread is up, so no writer
 * ever waits for a start.
 */
export function checkpointThreadUp(): boolean {
  if (!worker && Date.now() >= nextStart) spawn();
  return Atomics.load(up, 0) === 1;
}

/** Post a job to the thread: its id (a final names its passes by it) and its reply. */
export function checkpointOffLoop(job: CheckpointJobSpec): {
  id: number;
  reply: Promise<CheckpointResult>;
} {
  clearTimeout(idleTimer);
  const thread = worker ?? spawn();
  const id = nextId++;
  const reply = new Promise<CheckpointResult>((resolve) => {
    waiting.set(id, resolve);
    if (job.kind === "final") finals.add(id);
    thread.ref();
    thread.postMessage({ ...job, id } as CheckpointJob);
  });
  return { id, reply };
}

function spawn(): Worker {
  up = new Int32Array(new SharedArrayBuffer(4));
  startedAt = Date.now();
  const thread = new (nodeWorkerThreads().Worker)(
    pathToFileURL(builtFile("store/sqlite/wal-sync/checkpoint-thread.js")),
    {
      // The caller's own flags (--input-type, loaders, --eval) mean nothing to the thread's script.
      execArgv: [],
      workerData: { up },
    },
  );
  thread.on("message", (reply: CheckpointReply | { ready: true }) => {
    if ("ready" in reply) {
      startFailed = false;
      // Held open while it started; now only by jobs. Idle from now on too:
      // a checkpoint that then gives up waiting for the write lock posts no
      // job, and the thread must still end.
      if (waiting.size === 0) idle(thread);
      return;
    }
    const resolve = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (waiting.size === 0) idle(thread);
    const { id: _id, ...result } = reply;
    if (finals.delete(reply.id) && result.ok) crashes = 0;
    resolve?.(result);
  });
  const fail = (why: string) => {
    // A retired thread's exit concerns nobody: the jobs waiting belong to its successor.
    if (worker !== thread) return;
    worker = undefined;
    if (Atomics.load(up, 0) === 1 && waiting.size > 0) crashes++;
    // One that never came up would otherwise be started again at every commit.
    if (Atomics.load(up, 0) !== 1) {
      nextStart = Date.now() + RESTART_AFTER_MS;
      startFailed = true;
    }
    for (const resolve of waiting.values()) resolve({ ok: false, message: why });
    waiting.clear();
    finals.clear();
  };
  thread.on("error", (err) => fail(`the checkpoint thread failed: ${err.message}`));
  thread.on("exit", (code) => fail(`the checkpoint thread exited (${code})`));
  // Not unref'd until it is ready: a process that ends while its checkpoint
  // thread starts waits for the start rather than end it half-loaded.
  worker = thread;
  return thread;
}

/** No job in flight: the thread no longer holds the process open, and ends after IDLE_MS unless a job comes. */
function idle(thread: Worker): void {
  thread.unref();
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => retire(thread), IDLE_MS).unref();
}

function retire(thread: Worker): void {
  if (worker !== thread || waiting.size > 0) return;
  worker = undefined;
  void thread.terminate();
}

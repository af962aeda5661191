import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { builtFile } from "../../files/built.js";

export interface CheckpointJob {
  id: number;
  path: string;
  /** dev:ino of the database the writer holds: the thread refuses any other file. */
  key: string;
  synchronous: string;
}

/** SQLite's answer to wal_checkpoint(PASSIVE) (busy, frames in the log, frames checkpointed), or why it did not run. */
export type CheckpointResult =
  | { ok: true; busy: number; log: number; checkpointed: number }
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
/** Resolves once the current thread has started and loaded its script (or has failed). */
let started: Promise<void> = Promise.resolve();
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
const waiting = new Map<number, (reply: CheckpointResult) => void>();

/**
 * Resolves once the checkpoint thread is running, starting it if need be.
 * Starting one (a V8 isolate, better-sqlite3) held writers for 55–75 ms
 * when it happened under the write lock; a caller
 * awaits this before taking its write lock for a checkpoint, so its
 * writers never wait for that.
 */
export function checkpointThreadReady(): Promise<void> {
  if (!worker) spawn();
  return started;
}

export function checkpointOffLoop(job: Omit<CheckpointJob, "id">): Promise<CheckpointResult> {
  clearTimeout(idleTimer);
  const thread = worker ?? spawn();
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    thread.ref();
    thread.postMessage({ ...job, id } satisfies CheckpointJob);
  });
}

function spawn(): Worker {
  const thread = new Worker(pathToFileURL(builtFile("store/wal-sync/checkpoint-thread.js")), {
    // The caller's own flags (--input-type, loaders, --eval) mean nothing to the thread's script.
    execArgv: [],
  });
  let ready: () => void = () => {};
  started = new Promise((resolve) => {
    ready = resolve;
  });
  thread.on("message", (reply: CheckpointReply | { ready: true }) => {
    if ("ready" in reply) {
      // Held open while it started (someone awaits that); now only by jobs.
      // Idle from now on too: a checkpoint that then gives up waiting for
      // the write lock posts no job, and the thread must still end.
      if (waiting.size === 0) idle(thread);
      return ready();
    }
    const resolve = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (waiting.size === 0) idle(thread);
    const { id: _id, ...result } = reply;
    resolve?.(result);
  });
  const fail = (why: string) => {
    // A retired thread's exit concerns nobody: the jobs waiting belong to its successor.
    ready(); // whoever awaits the start goes on, and its job gets this answer
    if (worker !== thread) return;
    worker = undefined;
    for (const resolve of waiting.values()) resolve({ ok: false, message: why });
    waiting.clear();
  };
  thread.on("error", (err) => fail(`the checkpoint thread failed: ${err.message}`));
  thread.on("exit", (code) => fail(`the checkpoint thread exited (${code})`));
  // Not unref'd until it is ready: a caller awaiting the start (a checkpoint
  // that close() or a park then awaits) must keep the process alive.
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

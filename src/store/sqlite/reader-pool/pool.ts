import { pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";
import { nodeWorkerThreads } from "../../../builtins.js";
import type { HearthConfig } from "../../../config/schema.js";
import { HearthError } from "../../../errors.js";
import { builtFile } from "../../../files/built.js";
import { ThreadStream } from "./stream.js";
import { type FromThread, fromWire, type ReaderOp, type StreamOp, type ToThread } from "./wire.js";

interface Job {
  id: number;
  op: ReaderOp | StreamOp;
  args: unknown[];
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Parts of a long array result received so far. */
  parts: unknown[][];
}

interface Thread {
  worker: Worker;
  job: Job | undefined;
  /** Byte streams this thread holds open (their rows are read), by job id. */
  streams: Map<number, ThreadStream>;
}

export interface ReaderPoolInit {
  path: string;
  profile: string;
  config: HearthConfig;
  /** Threads at most (each with one read-only connection), started on demand. */
  size: number;
  /** The inode (`dev:ino`) the process holds now: a thread's connection must be on it. */
  key: () => string;
}

/** How long close() waits for a thread to close its connection before terminating it. */
const CLOSE_WAIT_MS = 2000;

/**
 * Reader threads of one database in one process: large reads run there, on
 * their own read-only connections, so the caller's event loop stays free.
 * Threads start on the first job and keep the process alive only while they
 * hold a job. Jobs queue in order; each thread runs one at a time.
 */
export class ReaderPool {
  private readonly threads: Thread[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private size: number;

  constructor(private readonly init: ReaderPoolInit) {
    this.size = init.size;
  }

  /** Allow up to `size` threads (a second store of the process may ask for more). */
  grow(size: number): void {
    if (size > this.size) this.size = size;
    this.dispatch();
  }

  /** Threads running now (for tests and `durability()`-style reports). */
  get running(): number {
    return this.threads.length;
  }

  /**
   * A stream of byte parts (a transcript's JSON): resolves once the thread
   * has read the rows (errors such as an unknown session reject here); each
   * part is built on the thread when the caller asks for it. The thread is
   * free for other jobs between parts.
   */
  stream(op: StreamOp, args: unknown[]): Promise<ThreadStream> {
    return this.run<ThreadStream>(op, args);
  }

  run<T>(op: ReaderOp | StreamOp, args: unknown[]): Promise<T> {
    if (this.closed) {
      return Promise.reject(
        new HearthError(
          "HEARTH_STORE_CLOSED",
          `the reader threads of ${this.init.path} are closed`,
          {
            resource: this.init.path,
          },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        id: this.nextId++,
        op,
        args,
        resolve: resolve as never,
        reject,
        parts: [],
      });
      this.dispatch();
    });
  }

  /**
   * Stop every thread: each closes its connection, then exits (terminated if
   * it does not answer in time). Jobs still queued are refused. Used when
   * the process parks for a maintenance window (no job is in flight then:
   * the store's door drained them) and when the last store closes.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(this.closedError());
    await Promise.all(this.threads.splice(0).map((t) => this.stop(t)));
  }

  /**
   * Stop the threads running now (their connections are on files that were
   * replaced: F3 recovery) and wait until each has closed its connection or
   * ended; jobs they held are refused, queued jobs go to new threads, which
   * open the current files.
   */
  async restart(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((t) => this.stop(t)));
    this.dispatch();
  }

  /** Open for jobs again (after a maintenance window); threads start on demand. */
  reopen(): void {
    this.closed = false;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((t) => !t.job);
      if (!thread) {
        if (this.threads.length >= this.size) return;
        thread = this.spawn();
      }
      const job = this.queue.shift()!;
      thread.job = job;
      thread.worker.ref();
      const message: ToThread = {
        type: "run",
        id: job.id,
        key: this.init.key(),
        op: job.op,
        args: job.args,
      };
      thread.worker.postMessage(message);
    }
  }

  private spawn(): Thread {
    const worker = new (nodeWorkerThreads().Worker)(threadScript(), {
      workerData: { path: this.init.path, profile: this.init.profile, config: this.init.config },
      // The caller's own flags (--input-type, loaders, --eval) mean nothing to the thread's script.
      execArgv: [],
    });
    const thread: Thread = { worker, job: undefined, streams: new Map() };
    worker.on("message", (message: FromThread) => {
      if (message.type === "closed") return;
      const stream = thread.streams.get(message.id);
      if (stream && (message.type === "chunk" || message.type === "failed")) {
        if (message.type === "failed") stream.fail(fromWire(message.error));
        if (message.type === "failed" || message.bytes === undefined)
          thread.streams.delete(message.id);
        if (message.type === "chunk") stream.deliver(message.bytes);
        this.settle(thread);
        return;
      }
      const job = thread.job;
      if (!job || job.id !== message.id) return;
      if (message.type === "part") {
        job.parts.push(message.items);
        // Ask for the next part after a turn of this thread's loop (see PART).
        setImmediate(() => {
          if (thread.job === job)
            worker.postMessage({ type: "next", id: job.id } satisfies ToThread);
        });
        return;
      }
      thread.job = undefined;
      if (message.type === "stream") {
        const { id } = job;
        const opened = new ThreadStream(
          () => {
            worker.ref();
            worker.postMessage({ type: "pull", id } satisfies ToThread);
          },
          () => {
            thread.streams.delete(id);
            worker.postMessage({ type: "cancel", id } satisfies ToThread);
            this.settle(thread);
          },
          (buffer) => {
            if (this.threads.includes(thread))
              worker.postMessage({ type: "give", buffer } satisfies ToThread, [buffer]);
          },
        );
        thread.streams.set(id, opened);
        job.resolve(opened);
      } else if (message.type === "failed") job.reject(fromWire(message.error));
      else if (message.type === "done") {
        if (message.parts) job.resolve(job.parts.concat([message.value as unknown[]]).flat());
        else job.resolve(message.value);
      }
      this.settle(thread);
      this.dispatch();
    });
    const lost = (reason: string) => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      const job = thread.job;
      thread.job = undefined;
      const err = new HearthError(
        "HEARTH_INTERNAL",
        `a reader thread of ${this.init.path} ${reason}`,
        {
          resource: this.init.path,
          hint: "retry; if it happens again, report it with the process's log",
        },
      );
      job?.reject(err);
      for (const stream of thread.streams.values()) stream.fail(err);
      thread.streams.clear();
      this.dispatch();
    };
    worker.on("error", (err) => lost(`failed: ${err.message}`));
    worker.on("exit", (code) => lost(`exited (code ${code})`));
    this.threads.push(thread);
    return thread;
  }

  private async stop(thread: Thread): Promise<void> {
    const { worker } = thread;
    worker.removeAllListeners("exit");
    worker.removeAllListeners("error");
    thread.job?.reject(this.closedError());
    thread.job = undefined;
    for (const stream of thread.streams.values()) stream.fail(this.closedError());
    thread.streams.clear();
    // Its connection closed (or it did not answer in time): either way the thread ends.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => resolve(), CLOSE_WAIT_MS);
      worker.on("message", (m: FromThread) => {
        if (m.type !== "closed") return;
        clearTimeout(timer);
        resolve();
      });
      worker.once("error", () => resolve());
      worker.ref();
      worker.postMessage({ type: "close" } satisfies ToThread);
    });
    await worker.terminate();
  }

  /** A thread keeps the process alive only while it runs a job or a part is awaited from it. */
  private settle(thread: Thread): void {
    let busy = thread.job !== undefined;
    for (const stream of thread.streams.values()) busy ||= stream.waiting;
    if (busy) thread.worker.ref();
    else thread.worker.unref();
  }

  private closedError(): HearthError {
    return new HearthError(
      "HEARTH_STORE_CLOSED",
      `the reader threads of ${this.init.path} were stopped while this call waited`,
      { resource: this.init.path, hint: "retry the call" },
    );
  }
}

/** The thread's script, the built one in dist/ (src/files/built.ts says why). */
function threadScript(): URL {
  return pathToFileURL(builtFile("store/sqlite/reader-pool/thread.js"));
}

import { fileURLToPath } from "node:url";
import { type Child, type Exit, spawnNode } from "./process.js";

const WORKER = fileURLToPath(new URL("../fixtures/store-worker.mjs", import.meta.url));

export interface WorkerError {
  code?: string;
  message: string;
}

interface Reply {
  id?: number;
  ok?: boolean;
  result?: unknown;
  error?: WorkerError;
  ack?: string;
}

/**
 * A real hearth process (test/fixtures/store-worker.mjs) driven over JSON
 * lines. Spawned with `startWorker()`, which resolves once the process
 * printed its readiness line (never a sleep).
 */
export class Worker {
  readonly process: Child;
  readonly pid: number;
  readonly acks: string[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private readonly ackWaiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(env: NodeJS.ProcessEnv = {}) {
    this.process = spawnNode([WORKER], { env });
    this.pid = this.process.pid;
    this.process.onLine((line) => this.onLine(line));
  }

  get stderr(): string {
    return this.process.stderr;
  }

  get exited(): Promise<Exit> {
    return this.process.exited;
  }

  private onLine(line: string): void {
    const msg = JSON.parse(line) as Reply;
    if (msg.ack !== undefined) {
      this.acks.push(msg.ack);
      for (const w of this.ackWaiters.filter((w) => this.acks.length >= w.n)) {
        this.ackWaiters.splice(this.ackWaiters.indexOf(w), 1);
        w.resolve();
      }
    } else if (msg.id !== undefined) {
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
    }
  }

  /** Send a command; resolves with its result, rejects with the worker's error. */
  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const reply = await this.request(op, args);
    if (!reply.ok) {
      const err = new Error(`${op} failed in pid ${this.pid}: ${reply.error?.message}`) as Error &
        WorkerError;
      err.code = reply.error?.code;
      throw err;
    }
    return reply.result as T;
  }

  /** Send a command and get the raw reply, error included. */
  request(
    op: string,
    args: Record<string, unknown> = {},
  ): Promise<{ ok: boolean; result?: unknown; error?: WorkerError }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => resolve({ ok: reply.ok === true, ...reply }));
      void this.exited.then(({ code, signal }) =>
        reject(
          new Error(`worker ${this.pid} exited (${code ?? signal}) during ${op}\n${this.stderr}`),
        ),
      );
      this.process.send({ id, op, ...args });
    });
  }

  /** Resolves once at least `n` acks arrived. */
  waitForAcks(n: number): Promise<void> {
    if (this.acks.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.ackWaiters.push({ n, resolve }));
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
    return this.process.kill(signal);
  }
}

/** Start a worker and wait for its readiness line. */
export async function startWorker(env: NodeJS.ProcessEnv = {}): Promise<Worker> {
  const worker = new Worker(env);
  await worker.process.json<{ ready?: boolean }>((l) => l.ready === true, "ready");
  return worker;
}

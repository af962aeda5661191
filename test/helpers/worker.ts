import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("../fixtures/store-worker.mjs", import.meta.url));
const live = new Set<Worker>();

export interface WorkerError {
  code?: string;
  message: string;
}

/**
 * A real hearth process driven over JSON lines. Spawned with `startWorker()`,
 * which resolves once the process printed its readiness line (never a sleep).
 */
export class Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  readonly acks: string[] = [];
  stderr = "";
  private nextId = 1;
  private readonly pending = new Map<
    number,
    (reply: { ok: boolean; result?: unknown; error?: WorkerError }) => void
  >();
  private readonly ackWaiters: Array<{ n: number; resolve: () => void }> = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;
  private onReady: () => void = () => {};

  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    this.pid = child.pid!;
    child.stderr.on("data", (d: Buffer) => {
      this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    this.ready = new Promise((resolve, reject) => {
      this.onReady = resolve;
      this.exited.then(({ code, signal }) =>
        reject(new Error(`worker exited (${code ?? signal}) before ready\n${this.stderr}`)),
      );
    });
    createInterface({ input: child.stdout }).on("line", (line) => this.onLine(line));
  }

  private onLine(line: string): void {
    const msg = JSON.parse(line) as { id?: number; ack?: string; ok?: boolean; ready?: boolean };
    if (msg.ready) {
      this.onReady();
      return;
    }
    if (msg.ack !== undefined) {
      this.acks.push(msg.ack);
      for (const w of this.ackWaiters.filter((w) => this.acks.length >= w.n)) {
        this.ackWaiters.splice(this.ackWaiters.indexOf(w), 1);
        w.resolve();
      }
      return;
    }
    if (msg.id !== undefined) {
      this.pending.get(msg.id)?.(msg as { ok: boolean });
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
  request(op: string, args: Record<string, unknown> = {}) {
    const id = this.nextId++;
    return new Promise<{ ok: boolean; result?: unknown; error?: WorkerError }>(
      (resolve, reject) => {
        this.pending.set(id, resolve);
        this.exited.then(({ code, signal }) =>
          reject(
            new Error(`worker ${this.pid} exited (${code ?? signal}) during ${op}\n${this.stderr}`),
          ),
        );
        this.child.stdin.write(`${JSON.stringify({ id, op, ...args })}\n`);
      },
    );
  }

  /** Resolves once at least `n` acks arrived. */
  waitForAcks(n: number): Promise<void> {
    if (this.acks.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.ackWaiters.push({ n, resolve }));
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
    live.delete(this);
  }
}

export async function startWorker(env: NodeJS.ProcessEnv = {}): Promise<Worker> {
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, ...env },
    stdio: "pipe",
  });
  const worker = new Worker(child);
  live.add(worker);
  await worker.ready;
  return worker;
}

/** Kill every worker still alive (call in afterEach). */
export async function killAllWorkers(): Promise<void> {
  await Promise.all([...live].map((w) => w.kill()));
}

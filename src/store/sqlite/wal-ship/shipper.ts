import { pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";
import { nodeWorkerThreads } from "../../../builtins.js";
import { builtFile } from "../../../files/built.js";
import { type PackedSegment, packSegment } from "./segment.js";
import type { WalHeader, WalPosition } from "./wal-file.js";

export interface PackJob {
  id: number;
  walPath: string;
  header: WalHeader;
  from: WalPosition;
  maxBytes: number;
}

export type PackReply =
  | { id: number; ok: true; packed: PackedSegment }
  | { id: number; ok: false; message: string };

/** A thread with no job for this long ends; the next tick starts another. */
const IDLE_MS = 30_000;

/**
 * The one replication thread of this process, shared by its replicators
 * (ship-thread.ts): started on the first segment, holding the process open
 * only while a job is in flight, ended after IDLE_MS without one. A thread
 * that fails (it cannot start, or dies) fails its jobs' promises, which
 * then pack inline, on the caller's loop: slower for the writer, never a
 * stop of replication.
 */
let worker: Worker | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
const waiting = new Map<
  number,
  { resolve: (p: PackedSegment) => void; reject: (e: Error) => void }
>();
/** Packs done on the thread and inline (the bench and tests look). */
export const packStats = { inline: 0, thread: 0 };
/** After a thread failed, packs run inline until then (Date.now()): no spawn per tick while it cannot start. */
let inlineUntil = 0;
const INLINE_AFTER_FAILURE_MS = 60_000;

/** The committed frames of the WAL past `from`, packed (segment.ts), on the replication thread. */
export async function packOffLoop(
  walPath: string,
  header: WalHeader,
  from: WalPosition,
  maxBytes: number,
): Promise<PackedSegment> {
  try {
    if (Date.now() < inlineUntil) throw new Error("the replication thread failed lately");
    const packed = await post({ walPath, header, from, maxBytes });
    packStats.thread++;
    return packed;
  } catch (err) {
    if ((err as { inline?: boolean }).inline === false) throw err;
    packStats.inline++;
    return packSegment(walPath, header, from, maxBytes);
  }
}

function post(job: Omit<PackJob, "id">): Promise<PackedSegment> {
  clearTimeout(idleTimer);
  const thread = worker ?? spawn();
  const id = nextId++;
  return new Promise<PackedSegment>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    thread.ref();
    thread.postMessage({ ...job, id } satisfies PackJob);
  });
}

function spawn(): Worker {
  const thread = new (nodeWorkerThreads().Worker)(
    pathToFileURL(builtFile("store/sqlite/wal-ship/ship-thread.js")),
    { execArgv: [] },
  );
  thread.on("message", (reply: PackReply) => {
    const job = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (waiting.size === 0) idle(thread);
    if (!job) return;
    if (reply.ok) {
      const d = reply.packed.data as Uint8Array; // a Buffer arrives as a plain Uint8Array
      job.resolve({ ...reply.packed, data: Buffer.from(d.buffer, d.byteOffset, d.byteLength) });
    }
    // The thread read the WAL and failed (a vanished file, say): inline would fail alike.
    else job.reject(Object.assign(new Error(reply.message), { inline: false }));
  });
  const fail = (why: string) => {
    if (worker !== thread) return;
    worker = undefined;
    inlineUntil = Date.now() + INLINE_AFTER_FAILURE_MS;
    for (const job of waiting.values()) job.reject(new Error(why));
    waiting.clear();
  };
  thread.on("error", (err) => fail(`the replication thread failed: ${err.message}`));
  thread.on("exit", (code) => fail(`the replication thread exited (${code})`));
  worker = thread;
  return thread;
}

function idle(thread: Worker): void {
  thread.unref();
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (worker !== thread || waiting.size > 0) return;
    worker = undefined;
    void thread.terminate();
  }, IDLE_MS).unref();
}

import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";
import type * as WorkerThreads from "node:worker_threads";

/**
 * Node built-ins that most short CLI commands never call, loaded at first
 * use instead of at import. node:crypto alone is ~10 ms of every process
 * that imports it (measured against `node -e 0`), and `hearth sessions
 * list` or `doctor` would otherwise load it, and node:worker_threads, only
 * because a module they import could make an id, a hash or a thread
 * (docs/benchmarks.md, workload 12). `require` caches: later calls are a
 * lookup.
 */
const load = createRequire(import.meta.url);

let crypto: typeof Crypto | undefined;
let workerThreads: typeof WorkerThreads | undefined;

/** node:crypto, loaded on the first call. */
export function nodeCrypto(): typeof Crypto {
  crypto ??= load("node:crypto") as typeof Crypto;
  return crypto;
}

/** node:worker_threads, loaded on the first call. */
export function nodeWorkerThreads(): typeof WorkerThreads {
  workerThreads ??= load("node:worker_threads") as typeof WorkerThreads;
  return workerThreads;
}

// Types only: `performance` below is the global one. Importing it from
// node:perf_hooks would load that module in every process that opens a store.
import type { EventLoopUtilization } from "node:perf_hooks";

import type { OffLoopReason } from "../../types.js";

export interface FsyncPolicyOptions {
  /** How often the event loop's other work is measured. */
  windowMs: number;
  /** The share of a window spent on work other than this store's commits from which the fsync leaves the loop. */
  busyShare: number;
  /** A commit's fsync slower than this moves the next ones off the loop … */
  slowMs: number;
  /** … for this long after the last slow one. */
  holdMs: number;
}

/**
 * Pending work of these kinds is a completion, not something waiting for
 * the loop to be free: a file operation's callback (SQLite's own fsync at
 * FULL would delay it just as much), a close, an open file, the checkpoint
 * thread's port.
 */
const NOT_WAITING = new Set([
  "FSReqCallback",
  "FSReqPromise",
  "CloseReq",
  "FileHandle",
  "MessagePort",
]);

/**
 * Whether anything besides this store's writes can want the event loop
 * while a commit holds it: a ref'd timer, immediate, socket, server, pipe,
 * child process, worker (process.getActiveResourcesInfo(), ~0.2 µs, asked
 * once per window). Standard output and error are not: on Linux their
 * writes to a pipe or terminal are synchronous, nothing of theirs waits for
 * the loop. When they cannot be told apart (no process._getActiveHandles),
 * they count, as the hand-off did before.
 */
export function othersOnLoop(): boolean {
  let stdio: number | undefined; // counted only when a pipe or terminal is up (a gateway stops at its server)
  for (const kind of process.getActiveResourcesInfo()) {
    if (NOT_WAITING.has(kind)) continue;
    if (kind === "PipeWrap" || kind === "TTYWrap") {
      stdio ??= stdOutputs();
      if (stdio > 0) {
        stdio--;
        continue;
      }
    }
    return true;
  }
  return false;
}

/** How many of this process's active handles are its standard output and error. */
function stdOutputs(): number {
  const handles = (process as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  let n = 0;
  for (const handle of handles) if (isStdOutput(handle)) n++;
  return n;
}

/** process.stdout or process.stderr (a pipe or terminal stream on fd 1 or 2, not reading). */
function isStdOutput(handle: unknown): boolean {
  const h = handle as { fd?: number; _handle?: { fd?: number; reading?: boolean } } | null;
  const fd = h?.fd ?? h?._handle?.fd;
  return (fd === 1 || fd === 2) && h?._handle?.reading !== true;
}

/** The policy every writer uses (figures: docs/benchmarks-history.md). */
export const FSYNC_POLICY: FsyncPolicyOptions = {
  windowMs: 100,
  busyShare: 0.5,
  slowMs: 20,
  holdMs: 10_000,
};

/**
 * Where a commit's WAL fsync runs at FULL: inside SQLite's commit, on the
 * caller's thread, or after it on the libuv pool (src/store/sqlite/wal-sync/sync.ts).
 *
 * The pool costs every write two thread wake-ups, and on a quiet process
 * buys nothing: nobody else wanted the loop while the fsync ran (a lone
 * writer ran 10–15 % slower with it, a gateway with one client 30 %;
 * docs/benchmarks-history.md). It pays when the loop has other work to do
 * meanwhile, and when an fsync takes long enough to be felt. So the fsync
 * leaves the loop while:
 *
 * - the loop is busy: in the last window, work other than this store's
 *   commits took `busyShare` of it or more (from the event loop's
 *   utilisation, minus the time the commits themselves took);
 * - the disk is slow: a commit's fsync took `slowMs` or more in the last
 *   `holdMs`;
 * - a backup of the database runs, which is when fsyncs turn slow;
 *
 * and only while something else can want the loop meanwhile: another
 * writer of this store queued in this process, or (othersOnLoop, judged
 * once per window) a timer, socket, server, pipe, child process. A process
 * whose loop has nothing but its own writes (a script appending in a loop,
 * an import) gains nothing from the hand-off, whatever the disk: it cost a
 * lone writer 25 µs of CPU per append on its own (docs/benchmarks-history.md).
 *
 * Otherwise SQLite fsyncs inside the commit, exactly as at FULL without
 * hearth.
 */
export class FsyncPolicy {
  private windowStart = performance.now();
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private commitMs = 0;
  private busy = false;
  private backup = false;
  private slowUntil = Number.NEGATIVE_INFINITY;
  private backupRunning: (() => boolean) | undefined;
  /** Something besides this store's writes could want the loop, as of the last window. */
  private others: boolean;
  /** Why the last decision moved the fsync off the loop (null: it stayed). */
  last: OffLoopReason = null;
  /** Where the last write-path commit's fsync ran, and why (durability().offLoop.lastFsync). */
  lastCommit: { on: "loop" | "pool"; reason: OffLoopReason } | undefined;
  /** Write-path commits since the writer opened, by where their fsync ran ("loop") or why it left. */
  readonly commits: Partial<Record<"loop" | NonNullable<OffLoopReason>, number>> = {};
  /** fsyncs of the WAL run on the pool (commits that left the loop share them). */
  poolFsyncs = 0;

  /**
   * fsyncs of the WAL for write-path commits since the writer opened: one
   * inside each commit that kept it on the loop (SQLite's, at FULL), and
   * those run on the pool. Checkpoints' own syncs are not counted.
   */
  get walFsyncs(): number {
    return (this.commits.loop ?? 0) + this.poolFsyncs;
  }

  constructor(
    private readonly options: FsyncPolicyOptions,
    private readonly othersWait: () => boolean = othersOnLoop,
  ) {
    this.others = othersWait();
  }

  /**
   * Whether the commit about to run leaves its fsync to the pool;
   * `queued`: other writes of this store wait in this process behind it.
   */
  offLoop(now = performance.now(), queued = false): boolean {
    if (now - this.windowStart >= this.options.windowMs) this.closeWindow(now);
    if (!queued && !this.others) {
      // Nothing else wants the loop: a hand-off would only cost (two thread wake-ups).
      this.last = null;
      return false;
    }
    // A running backup is named first: it is a cause the operator can see
    // (the flag), and slow fsyncs and a busy loop are what it brings.
    this.last = this.backup
      ? "backup"
      : this.busy
        ? "busy-loop"
        : now < this.slowUntil
          ? "slow-disk"
          : null;
    return this.last !== null;
  }

  /** Ask `raised` now and then at most once per window whether a backup of the database runs. */
  watchBackups(raised: () => boolean): void {
    this.backupRunning = raised;
    this.backup = raised(); // a writer opened during a backup knows from its first commit
  }

  /** A write transaction held the loop for `ms` (its fsync included when SQLite ran it). */
  spent(ms: number): void {
    this.commitMs += ms;
  }

  /**
   * A write-path commit made where `how` said, which held the loop for
   * `heldMs` (its COMMIT statement `commitMs` of it, SQLite's fsync
   * included when it ran on the loop).
   */
  committed(
    how: { on: "loop" | "pool"; reason: OffLoopReason },
    heldMs: number,
    commitMs: number,
  ): void {
    this.lastCommit = how;
    const key = how.reason ?? "loop";
    this.commits[key] = (this.commits[key] ?? 0) + 1;
    this.spent(heldMs);
    if (how.on === "loop") this.synced(commitMs);
  }

  /** An fsync of the WAL took `ms` (inside a commit, or on the pool). */
  synced(ms: number, now = performance.now()): void {
    if (ms >= this.options.slowMs) this.slowUntil = now + this.options.holdMs;
  }

  private closeWindow(now: number): void {
    const window = performance.eventLoopUtilization(this.elu);
    this.elu = performance.eventLoopUtilization();
    const total = window.active + window.idle;
    const other = Math.max(0, window.active - this.commitMs);
    this.busy = total > 0 && other / total >= this.options.busyShare;
    this.commitMs = 0;
    this.windowStart = now;
    this.backup = this.backupRunning?.() ?? false;
    this.others = this.othersWait();
  }
}

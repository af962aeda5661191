import fsx from "fs-native-extensions";
import { TURNSTILE_OFFSET, WRITE_OFFSET } from "./lock-map.js";

const TIMED_OUT = Symbol("timed out");

/**
 * Serialises write transactions across processes, fairly, without ever
 * blocking the event loop.
 *
 * better-sqlite3 waits for SQLite's write lock with a synchronous busy
 * handler that sleeps with growing backoff: while it waits, every timer in
 * the process is frozen, and a process that just committed usually wins the
 * lock again before the sleepers wake, so some writers starve.
 *
 * Here a writer first takes two OFD locks on the database inode: the
 * turnstile, then the write byte, then lets the turnstile go, and holds the
 * write byte around BEGIN IMMEDIATE … COMMIT. When a lock is taken, the
 * wait is an F_OFD_SETLKW on a thread fs-native-extensions starts for that
 * wait alone (its waitForLock; not the libuv pool), so the event loop keeps
 * running.
 * Only one process can wait for the write byte at a time (the one holding
 * the turnstile), so a writer that has just committed cannot overtake it,
 * and the kernel queues turnstile waiters behind one another. The
 * uncontended path is two try-locks and two unlocks.
 *
 * Within the process, writers queue in FIFO order before touching the kernel.
 */
export class FairWriteLock {
  private readonly queue: (() => void)[] = [];
  private busy = false;
  /** A kernel wait we gave up on; it is handed straight back when granted. */
  private straggler: Promise<void> | undefined;

  constructor(
    private readonly fd: () => number,
    private readonly onTimeout: () => Error,
  ) {}

  /** Writers of this process waiting behind the one holding the lock. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Run `fn` while holding the write lock; give up after `patienceMs` of
   * waiting. The common case (nobody ahead in this process, the kernel
   * grants at once, `fn` returns without a promise) runs `fn` and lets the
   * lock go before returning, with no turn of the microtask queue in
   * between: each await is one more on every write (docs/benchmarks.md,
   * workload 1).
   */
  run<T>(fn: () => T | Promise<T>, patienceMs: number): Promise<T> {
    if (this.busy) return this.runQueued(fn, patienceMs);
    this.busy = true;
    let fd: number;
    try {
      fd = this.fd();
      if (!this.tryKernel(fd)) return this.runKernel(fn, Date.now() + patienceMs);
    } catch (err) {
      this.leaveProcess();
      return Promise.reject(err);
    }
    let result: T | Promise<T>;
    try {
      result = fn();
      if (result instanceof Promise) return result.finally(() => this.release(fd));
    } catch (err) {
      // As `try { await fn() } finally { release }`: an error of the release wins.
      try {
        this.release(fd);
      } catch (releaseError) {
        return Promise.reject(releaseError);
      }
      return Promise.reject(err);
    }
    try {
      this.release(fd);
    } catch (err) {
      return Promise.reject(err);
    }
    return Promise.resolve(result);
  }

  /** Let the write byte go, then the next writer of this process in. */
  private release(fd: number): void {
    try {
      fsx.unlock(fd, WRITE_OFFSET, 1);
    } finally {
      this.leaveProcess();
    }
  }

  /** run() behind other writers of this process. */
  private async runQueued<T>(fn: () => T | Promise<T>, patienceMs: number): Promise<T> {
    const deadline = Date.now() + patienceMs;
    await this.enterProcess(deadline);
    let fd: number;
    try {
      fd = this.fd();
      if (this.tryKernel(fd)) return await this.holding(fd, fn);
    } catch (err) {
      this.leaveProcess();
      throw err;
    }
    return this.runKernel(fn, deadline);
  }

  /** run() once this process's turn is had and the kernel did not grant at once: wait for it. */
  private async runKernel<T>(fn: () => T | Promise<T>, deadline: number): Promise<T> {
    try {
      await this.lockKernel(deadline);
    } catch (err) {
      this.leaveProcess();
      throw err;
    }
    return this.holding(this.fd(), fn);
  }

  /** Run `fn` with the write byte held on `fd`, then let it and the process's turn go. */
  private async holding<T>(fd: number, fn: () => T | Promise<T>): Promise<T> {
    try {
      return await fn();
    } finally {
      this.release(fd);
    }
  }

  /** Hold only the in-process queue (structural work excludes this process's writers with it). */
  async exclusive<T>(fn: () => T | Promise<T>, patienceMs: number): Promise<T> {
    await this.enterProcess(Date.now() + patienceMs);
    try {
      return await fn();
    } finally {
      this.leaveProcess();
    }
  }

  private enterProcess(deadline: number): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          const at = this.queue.indexOf(grant);
          if (at >= 0) this.queue.splice(at, 1);
          reject(this.onTimeout());
        },
        Math.max(0, deadline - Date.now()),
      );
      this.queue.push(grant);
    });
  }

  private leaveProcess(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.busy = false;
  }

  /**
   * The uncontended path in two syscalls instead of three: turnstile and
   * write byte taken in one atomic request (a range from the one to the
   * other; the bytes between belong to nobody), then the turnstile part let
   * go, so the write byte alone is held, exactly as after lockKernel. When
   * either byte is held elsewhere nothing is taken, and lockKernel queues.
   */
  private tryKernel(fd: number): boolean {
    if (this.straggler) return false;
    if (!fsx.tryLock(fd, TURNSTILE_OFFSET, WRITE_OFFSET - TURNSTILE_OFFSET + 1)) return false;
    fsx.unlock(fd, TURNSTILE_OFFSET, WRITE_OFFSET - TURNSTILE_OFFSET);
    return true;
  }

  private async lockKernel(deadline: number): Promise<void> {
    if (this.straggler) await this.within(this.straggler, deadline);
    const fd = this.fd();
    if (fsx.tryLock(fd, TURNSTILE_OFFSET, 1)) {
      if (fsx.tryLock(fd, WRITE_OFFSET, 1)) {
        fsx.unlock(fd, TURNSTILE_OFFSET, 1);
        return;
      }
    } else {
      await this.waitFor(fd, TURNSTILE_OFFSET, deadline);
    }
    try {
      if (!fsx.tryLock(fd, WRITE_OFFSET, 1)) await this.waitFor(fd, WRITE_OFFSET, deadline);
    } finally {
      fsx.unlock(fd, TURNSTILE_OFFSET, 1);
    }
  }

  private async waitFor(fd: number, offset: number, deadline: number): Promise<void> {
    const request = fsx.waitForLock(fd, offset, 1);
    if (await settledBy(request, deadline)) return;
    // The kernel request cannot be cancelled: when it is granted, give it back.
    this.straggler = request
      .then(
        () => fsx.unlock(fd, offset, 1),
        () => undefined,
      )
      .finally(() => {
        this.straggler = undefined;
      });
    throw this.onTimeout();
  }

  private async within(promise: Promise<unknown>, deadline: number): Promise<void> {
    if (!(await settledBy(promise, deadline))) throw this.onTimeout();
  }
}

/** Resolves true when `promise` fulfils before `deadline`, false when time runs out first. */
async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - Date.now()));
  });
  try {
    return (await Promise.race([promise, timeout])) !== TIMED_OUT;
  } finally {
    clearTimeout(timer);
  }
}

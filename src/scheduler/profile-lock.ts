import { HearthError } from "../errors.js";

/**
 * One profile's access order inside the scheduler. Structural jobs
 * (optimize) take it exclusively for their whole run, so the scheduler's
 * own bookkeeping (it opens the store as a writer to record runs) and its
 * other workers never make them refuse; everything else shares it. FIFO:
 * a waiting structural job is not starved by a stream of shared users.
 */
export class ProfileLock {
  private shared = 0;
  private exclusive = false;
  private readonly queue: { exclusive: boolean; go: () => void; fail: (e: Error) => void }[] = [];
  private closed = false;

  async run<T>(exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    await this.acquire(exclusive);
    try {
      return await fn();
    } finally {
      if (exclusive) this.exclusive = false;
      else this.shared--;
      this.pump();
    }
  }

  /** Refuse every waiter (the scheduler is stopping); holders finish. */
  close(): void {
    this.closed = true;
    for (const w of this.queue.splice(0))
      w.fail(new HearthError("HEARTH_INTERNAL", "the scheduler is stopping"));
  }

  private acquire(exclusive: boolean): Promise<void> {
    if (this.closed)
      return Promise.reject(new HearthError("HEARTH_INTERNAL", "the scheduler is stopping"));
    return new Promise((go, fail) => {
      this.queue.push({ exclusive, go, fail });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (this.exclusive) return;
      if (next.exclusive && this.shared > 0) return;
      this.queue.shift();
      if (next.exclusive) this.exclusive = true;
      else this.shared++;
      next.go();
      if (next.exclusive) return;
    }
  }
}

import { HearthError } from "../errors.js";
import type { Store } from "../store/api.js";
import type { AppendResult, OpenChat } from "../store/messages.js";
import type { MetaCas } from "../store/meta.js";
import type { Message, NewMessage } from "../store/types.js";

/** A meta compare-and-set that rides along with the append (turn leases). */
export interface AppendExtras {
  metaBefore?: MetaCas;
  metaAfter?: MetaCas;
  /** Answer with the session as the commit left it (no read after it; AppendItem.withSession). */
  withSession?: boolean;
  /** Append only while the session is still this chat's open one (AppendItem.openChat). */
  openChat?: OpenChat | undefined;
}

/** A committed append: the message, and the session when the backend read it in the commit. */
export type Appended = Extract<AppendResult, { ok: true }>;

interface Pending extends AppendExtras {
  sessionId: string;
  message: NewMessage;
  resolve: (r: Appended) => void;
  reject: (e: Error) => void;
}

/**
 * Group commit (D1 at speed): appends that arrive while a commit is running
 * or within the same tick are written together in one transaction, and each
 * caller is answered only after that transaction committed. One fsync then
 * serves many requests. With `enabled: false` each append is its own
 * transaction (the baseline the benchmark compares against).
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  /** Sizes of the batches committed so far (for /metrics). */
  onBatch: ((size: number, ms: number) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly enabled: boolean,
  ) {}

  append(sessionId: string, message: NewMessage, extras: AppendExtras = {}): Promise<Message> {
    if (!this.enabled)
      return this.appendReporting(sessionId, message, extras).then((r) => r.message);
    // Answered with the message directly: no second promise (and microtask) per append.
    return new Promise((resolve, reject) => {
      this.queue.push({
        sessionId,
        message,
        ...extras,
        resolve: (r) => resolve(r.message),
        reject,
      });
      this.schedule();
    });
  }

  /** append(), answered with the session too where the commit read it (PostgreSQL; SQLite with `withSession`). */
  appendReporting(
    sessionId: string,
    message: NewMessage,
    extras: AppendExtras = {},
  ): Promise<Appended> {
    if (!this.enabled) {
      return this.store.messages.appendMany([{ sessionId, message, ...extras }]).then(([r]) => {
        if (!r?.ok)
          throw (
            r?.error ?? new HearthError("HEARTH_INTERNAL", "internal: the append has no result")
          );
        return r;
      });
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ sessionId, message, ...extras, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when everything queued so far is committed. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing) await new Promise((r) => setTimeout(r, 5));
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch = this.queue;
    this.queue = [];
    const started = performance.now();
    let results: AppendResult[];
    try {
      results = await this.store.messages.appendMany(
        batch.map(({ sessionId, message, metaBefore, metaAfter, withSession, openChat }) => ({
          sessionId,
          message,
          ...(metaBefore ? { metaBefore } : {}),
          ...(metaAfter ? { metaAfter } : {}),
          ...(withSession ? { withSession } : {}),
          ...(openChat ? { openChat } : {}),
        })),
      );
    } catch (err) {
      for (const p of batch) p.reject(err as Error);
      results = [];
    }
    this.onBatch?.(batch.length, performance.now() - started);
    results.forEach((r, i) => {
      const p = batch[i]!;
      if (r.ok) p.resolve(r);
      else p.reject(r.error);
    });
    this.flushing = false;
    // Whatever arrived during this commit goes in the next one, after the
    // callers just answered have run on (a turn's reply joins that commit
    // instead of waiting for the one after).
    if (this.queue.length > 0) this.schedule();
  }
}

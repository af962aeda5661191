import type { JsonParts } from "../../transcript-json.js";

/**
 * The caller's end of a byte stream a reader thread holds (a transcript's
 * JSON parts): each `next()` asks the thread for one part, so parts arrive
 * no faster than the caller takes them (a response written with
 * backpressure reads the next part when the socket has drained).
 */
export class ThreadStream implements JsonParts {
  private waiter:
    | { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (err: unknown) => void }
    | undefined;
  private ended = false;
  private error: unknown;

  constructor(
    /** Ask the thread for the next part. */
    private readonly pull: () => void,
    /** Tell the thread the caller is done: it drops the rows. */
    private readonly cancel: () => void,
    /** Hand a part's memory back to the thread (transferred). */
    private readonly give: (buffer: ArrayBuffer) => void,
  ) {}

  release(part: Uint8Array): void {
    if (this.error !== undefined || !(part.buffer instanceof ArrayBuffer)) return;
    this.give(part.buffer);
  }

  /** A part is being waited for (the thread must stay referenced). */
  get waiting(): boolean {
    return this.waiter !== undefined;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    if (this.waiter) {
      return Promise.reject(new TypeError("a part is already being read: await each next()"));
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.pull();
    });
  }

  /** End early: the thread frees what it holds for this stream. */
  async return(): Promise<IteratorResult<Uint8Array>> {
    if (!this.ended && this.error === undefined) {
      this.ended = true;
      this.cancel();
    }
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The thread's answer to a pull: a part, or none (the stream is over). */
  deliver(bytes: Uint8Array | undefined): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (bytes === undefined) this.ended = true;
    waiter?.resolve(
      bytes === undefined ? { done: true, value: undefined } : { done: false, value: bytes },
    );
  }

  /** The thread failed or was stopped: this and every later next() rejects. */
  fail(err: unknown): void {
    if (this.ended) return;
    this.error = err;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(err);
  }
}

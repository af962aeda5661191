/**
 * What a turn asks of its `stop` (a client gone, a drain): whether it is
 * set, and a listener while the turn waits. An AbortSignal fits; so does a
 * TurnStop, which a gateway makes per request instead of an
 * AbortController (creating one, with its EventTarget, was ~4 % of a
 * turn's CPU in the gateway's profile; docs/benchmarks.md).
 */
export interface StopSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A StopSignal set once by abort(); listeners are kept only while someone waits. */
export class TurnStop implements StopSignal {
  aborted = false;
  reason: unknown;
  private listeners: (() => void)[] | undefined;

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  /** Every listener runs once, at the abort (`once` is how they all behave). */
  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }
}

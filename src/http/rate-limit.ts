/**
 * A per-key token bucket in memory: `burst` attempts at once, refilled at
 * `perMinute`. A caller takes a token before an attempt and may give it back
 * when the attempt succeeded, so only failures (and attempts still in
 * flight) count. The table is bounded: full buckets are dropped first, and
 * past `maxKeys` the least recently seen keys go.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limits: () => { burst: number; perMinute: number },
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one token for `key`: `{ ok: true }`, or how many seconds until one is available. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const { burst, perMinute } = this.limits();
    const now = this.now();
    const bucket = this.refill(key, burst, perMinute, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    const perMs = perMinute / 60_000;
    return {
      ok: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)),
    };
  }

  /** Give back a token taken by an attempt that succeeded. */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.limits().burst, bucket.tokens + 1);
  }

  private refill(key: string, burst: number, perMinute: number, now: number) {
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key); // re-inserted below: the map stays in least-recently-seen order
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) * perMinute) / 60_000);
      bucket.at = now;
    } else {
      bucket = { tokens: burst, at: now };
      if (this.buckets.size >= this.maxKeys) this.evict(burst, perMinute, now);
    }
    this.buckets.set(key, bucket);
    return bucket;
  }

  private evict(burst: number, perMinute: number, now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * perMinute) / 60_000 >= burst) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}

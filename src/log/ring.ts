/** One parsed log line: pino's fields, at least a numeric level and a time in ms. */
export type LogEvent = Record<string, unknown> & { level: number; time: number };

/**
 * The most recent log events of a process, bounded (the oldest fall out),
 * in memory only: no log file is needed to answer `hearth logs` or
 * GET /v1/events. Followers get every event pushed after they subscribed.
 */
export class EventRing {
  private readonly events: LogEvent[] = [];
  private readonly followers = new Set<(e: LogEvent) => void>();

  /** Events below `minLevel` are not kept. */
  constructor(
    readonly capacity: number,
    private readonly minLevel = 0,
  ) {}

  push(event: LogEvent): void {
    if (event.level < this.minLevel) return;
    this.events.push(event);
    if (this.events.length > this.capacity)
      this.events.splice(0, this.events.length - this.capacity);
    for (const f of this.followers) f(event);
  }

  /** The newest `limit` events at or above `level`, oldest first. */
  recent(level = 0, limit = this.capacity): LogEvent[] {
    const kept = this.events.filter((e) => e.level >= level);
    return limit <= 0 ? [] : kept.slice(-limit);
  }

  /** Call `fn` with each event pushed from now on; returns the unsubscribe. */
  follow(fn: (e: LogEvent) => void): () => void {
    this.followers.add(fn);
    return () => this.followers.delete(fn);
  }
}

/**
 * A log line parsed into an event, or a plain line kept as an event of
 * `plainLevel` (info unless told) with the text as `msg`.
 */
export function parseLogLine(
  line: string,
  defaults: Record<string, unknown> = {},
  plainLevel = 30,
): LogEvent {
  if (line.startsWith("{")) {
    try {
      const e = JSON.parse(line) as Record<string, unknown>;
      if (e && typeof e === "object" && !Array.isArray(e))
        return {
          ...defaults,
          ...e,
          level: typeof e.level === "number" ? e.level : 30,
          time: typeof e.time === "number" ? e.time : Date.now(),
        };
    } catch {
      // not JSON after all: kept as text below
    }
  }
  return { ...defaults, level: plainLevel, time: Date.now(), msg: line };
}

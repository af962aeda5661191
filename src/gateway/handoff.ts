import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import { currentIdentity } from "../process/identity.js";
import type { HandoffWatch } from "../store/handoffs.js";
import type { Message, Session } from "../store/types.js";
import { deadline } from "../turn/deadline.js";
import type { ProfileRuntime } from "../turn/run.js";

export interface Delivery {
  profile: string;
  session: Session;
  transcript: readonly Message[];
  signal: AbortSignal;
}

/** A platform a session can be handed off to. */
export interface PlatformAdapter {
  readonly kind: string;
  deliver(delivery: Delivery): Promise<void>;
}

/** POSTs `{ profile, session, messages }` to the configured URL; any non-2xx fails the handoff. */
export class WebhookAdapter implements PlatformAdapter {
  readonly kind = "webhook";
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async deliver(d: Delivery): Promise<void> {
    const { signal, done } = deadline(
      d.signal,
      this.timeoutMs,
      `timed out: ${this.url} did not answer within ${this.timeoutMs} ms`,
      "HEARTH_DELIVERY_FAILED",
    );
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ profile: d.profile, session: d.session, messages: d.transcript }),
        signal,
      });
      await response.body?.cancel();
      if (!response.ok) throw delivery(`${this.url} answered ${response.status}`);
    } catch (err) {
      if (signal.aborted) throw delivery(String(signal.reason?.message ?? signal.reason));
      throw isHearthError(err) ? err : delivery((err as Error).message, err);
    } finally {
      done();
    }
  }
}

/** The HTTP API itself: the transcript is served to API clients; nothing to push. */
export class HttpAdapter implements PlatformAdapter {
  readonly kind = "http";
  async deliver(): Promise<void> {}
}

export function adapterFor(config: HearthConfig, platform: string): PlatformAdapter | undefined {
  const a = config.gateway.adapters[platform];
  if (!a) return platform === "http" ? new HttpAdapter() : undefined;
  if (a.kind === "http") return new HttpAdapter();
  return a.url ? new WebhookAdapter(a.url, a.timeoutMs) : undefined;
}

/** This gateway's owner string in handoff rows: its P1 identity. */
export function ownerId(): string {
  const id = currentIdentity();
  return id ? `gateway:${id.pid}:${id.startTicks}:${id.bootId}` : `gateway:${process.pid}`;
}

const HEARTBEAT_MS = 5_000;

/**
 * How often a store that pushes wake-ups is polled while its push is live
 * (PostgreSQL with its LISTEN connection up): a notification wakes the
 * watcher at once, so this poll only finds what a lost notification left
 * behind. A store that cannot push (SQLite), or whose LISTEN connection is
 * down, is polled every gateway.handoffPollMs, as is every store while an
 * outcome waits to be written again.
 */
export const HANDOFF_FALLBACK_POLL_MS = 5_000;

/** Why a store was polled: its timer, a notification, or its push just came (back) up. */
export type PollCause = "timer" | "notify" | "listening";

export interface WatcherLog {
  info(event: Record<string, unknown>, message: string): void;
  warn(event: Record<string, unknown>, message: string): void;
}

/** The final state a claimed handoff must reach, kept until the store has taken it. */
interface Settlement {
  runtime: ProfileRuntime;
  session: Session;
  outcome: "completed" | "failed";
  error: string | null;
  /** What started the poll that claimed it (logged: a notification, or a timer). */
  via: PollCause;
}

/** One watched store: whether its push is live, its next poll, the cause of a poll due now. */
interface Watched {
  runtime: ProfileRuntime;
  live: boolean;
  timer: NodeJS.Timeout | undefined;
  due: PollCause | undefined;
  watch: HandoffWatch | undefined;
}

const byCause = (): Record<PollCause, number> => ({ timer: 0, notify: 0, listening: 0 });

/**
 * Watches every served profile for pending handoffs, claims them (CAS
 * pending → running), delivers through the platform's adapter and completes
 * or fails them. Each delivery runs on its own, so a slow one (in any
 * profile) never delays another. At start, running rows left by a dead
 * gateway are failed, never re-queued.
 *
 * Each store is polled on its own timer: every gateway.handoffPollMs, or
 * every HANDOFF_FALLBACK_POLL_MS while the store pushes wake-ups
 * (store.handoffs.watch: PostgreSQL's LISTEN/NOTIFY), which poll it at once.
 *
 * A claimed row always reaches a final state while this gateway lives: when
 * the store refuses the completing or failing write (busy, files changed),
 * the outcome is kept and written again on every poll until it lands, each
 * failure logged at warn. Only this gateway may settle the row (it owns it),
 * so nobody else would.
 */
export class HandoffWatcher {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly owner = ownerId();
  private readonly abort = new AbortController();
  private readonly unsettled = new Map<string, Settlement>();
  private readonly watched: Watched[] = [];
  private stopped = false;
  private polling = false;
  /** Polls and claims by cause, since start (tests read them; so could metrics). */
  readonly counts = { polls: byCause(), claims: byCause() };

  constructor(
    private readonly runtimes: Map<string, ProfileRuntime>,
    private readonly config: () => HearthConfig,
    private readonly log: WatcherLog,
    private readonly recover: (err: unknown) => Promise<unknown> = async () => false,
  ) {}

  async start(): Promise<void> {
    for (const r of this.runtimes.values()) {
      const failed = await r.store.handoffs.failOrphans(
        [this.owner],
        "the gateway delivering it stopped; it may or may not have been delivered, so it is not retried",
      );
      if (failed.length > 0)
        this.log.info(
          { event: "handoff.orphans_failed", profile: r.profile, sessions: failed },
          "failed handoffs of a dead gateway",
        );
    }
    for (const runtime of this.runtimes.values()) {
      const w: Watched = {
        runtime,
        live: false,
        timer: undefined,
        due: undefined,
        watch: undefined,
      };
      this.watched.push(w);
      w.watch = await runtime.store.handoffs.watch({
        wake: () => this.kick(w, "notify"),
        live: (up) => {
          w.live = up;
          // Up: poll once for what was sent while nobody listened. Down: poll fast until it is back.
          if (up) this.kick(w, "listening");
          else this.schedule(w);
        },
      });
      this.schedule(w);
    }
  }

  /** Stop polling; give running deliveries `graceMs`, then abort them (they are failed, never re-queued). */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    for (const w of this.watched) clearTimeout(w.timer);
    await Promise.all(this.watched.map((w) => w.watch?.stop()));
    const settled = Promise.allSettled([...this.inFlight]);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    this.abort.abort(
      delivery("the gateway stopped during the delivery; it may or may not have arrived"),
    );
    await settled;
    // One last try; what still cannot be written is failed by the next gateway's start.
    await this.settlePending();
  }

  /** The store's next poll, slow while its push is live and nothing waits to be settled. */
  private schedule(w: Watched): void {
    clearTimeout(w.timer);
    if (this.stopped) return;
    const fast = this.config().gateway.handoffPollMs;
    const ms =
      w.live && this.unsettled.size === 0 ? Math.max(fast, HANDOFF_FALLBACK_POLL_MS) : fast;
    w.timer = setTimeout(() => this.kick(w, "timer"), ms);
  }

  /** Poll `w` now (after the poll under way, if any). */
  private kick(w: Watched, cause: PollCause): void {
    clearTimeout(w.timer);
    w.due ??= cause;
    this.poll();
  }

  /** Poll every store that is due, one poll at a time, until none is. */
  private poll(): void {
    if (this.polling || this.stopped) return;
    this.polling = true;
    void (async () => {
      try {
        for (let due = this.dueNow(); due.length > 0 && !this.stopped; due = this.dueNow()) {
          await this.settlePending();
          for (const w of due) await this.pollOne(w);
        }
      } finally {
        this.polling = false;
      }
    })();
  }

  private dueNow(): Watched[] {
    return this.watched.filter((w) => w.due !== undefined);
  }

  private async pollOne(w: Watched): Promise<void> {
    const cause = w.due ?? "timer";
    w.due = undefined;
    this.counts.polls[cause]++;
    const r = w.runtime;
    try {
      for (const session of await r.store.handoffs.list("pending", 20)) {
        if (!(await r.store.handoffs.claim(session.id, this.owner))) continue; // another claimer won
        this.counts.claims[cause]++;
        const job = this.deliver(r, session, cause).finally(() => this.inFlight.delete(job));
        this.inFlight.add(job);
      }
    } catch (err) {
      await this.recover(err);
      this.log.warn(
        { event: "handoff.poll_failed", profile: r.profile, error: (err as Error).message },
        "handoff poll failed; retrying",
      );
    } finally {
      if (w.due === undefined) this.schedule(w);
    }
  }

  private async deliver(r: ProfileRuntime, session: Session, via: PollCause): Promise<void> {
    const platform = session.handoff?.platform ?? "";
    const beat = setInterval(
      () =>
        void r.store.handoffs.heartbeat(session.id, this.owner).catch((err: Error) =>
          this.log.warn(
            {
              event: "handoff.heartbeat_failed",
              profile: r.profile,
              session: session.id,
              error: err.message,
            },
            "handoff heartbeat not written; waiters may see the delivery as stalled",
          ),
        ),
      HEARTBEAT_MS,
    );
    let settlement: Settlement;
    try {
      const adapter = adapterFor(this.config(), platform);
      if (!adapter)
        throw delivery(`no adapter for platform ${JSON.stringify(platform)} (gateway.adapters)`);
      const transcript = await r.store.messages.load(session.id);
      await adapter.deliver({ profile: r.profile, session, transcript, signal: this.abort.signal });
      settlement = { runtime: r, session, outcome: "completed", error: null, via };
    } catch (err) {
      settlement = { runtime: r, session, outcome: "failed", error: (err as Error).message, via };
    } finally {
      clearInterval(beat);
    }
    await this.settle(settlement);
  }

  /** Write the final state; on failure keep it for the next poll. */
  private async settle(s: Settlement): Promise<void> {
    const { runtime: r, session, outcome, error, via } = s;
    const platform = session.handoff?.platform ?? "";
    try {
      const won =
        outcome === "completed"
          ? await r.store.handoffs.complete(session.id, this.owner)
          : await r.store.handoffs.fail(session.id, this.owner, error ?? "failed");
      this.unsettled.delete(session.id);
      const event = {
        event: `handoff.${outcome}`,
        profile: r.profile,
        session: session.id,
        platform,
        via,
        ...(error === null ? {} : { error }),
        ...(won ? {} : { note: "the row was no longer running under this gateway" }),
      };
      if (outcome === "completed") this.log.info(event, "handoff delivered");
      else this.log.warn(event, "handoff failed");
    } catch (err) {
      this.unsettled.set(session.id, s);
      // Written again on every poll: poll fast until it lands.
      for (const w of this.watched) if (w.due === undefined) this.schedule(w);
      await this.recover(err);
      this.log.warn(
        {
          event: "handoff.settle_failed",
          profile: r.profile,
          session: session.id,
          outcome,
          error: (err as Error).message,
        },
        `could not mark the handoff ${outcome}; retrying on the next poll`,
      );
    }
  }

  private async settlePending(): Promise<void> {
    for (const s of [...this.unsettled.values()]) await this.settle(s);
  }
}

function delivery(message: string, cause?: unknown): HearthError {
  return new HearthError("HEARTH_DELIVERY_FAILED", message, {
    hint: "check gateway.adapters and the receiving end; the handoff is failed, never re-queued",
    ...(cause === undefined ? {} : { cause }),
  });
}

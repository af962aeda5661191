import type { HearthConfig } from "../config/schema.js";
import { currentIdentity } from "../process/identity.js";
import type { Message, Session } from "../store/types.js";
import { deadline } from "./deadline.js";
import type { ProfileRuntime } from "./turns.js";

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
    );
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ profile: d.profile, session: d.session, messages: d.transcript }),
        signal,
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`${this.url} answered ${response.status}`);
    } catch (err) {
      throw signal.aborted ? new Error(String(signal.reason?.message ?? signal.reason)) : err;
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
 * Watches every served profile for pending handoffs, claims them (CAS
 * pending → running), delivers through the platform's adapter and completes
 * or fails them. Each delivery runs on its own, so a slow one (in any
 * profile) never delays another. At start, running rows left by a dead
 * gateway are failed, never re-queued.
 */
export class HandoffWatcher {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly owner = ownerId();
  private readonly abort = new AbortController();

  constructor(
    private readonly runtimes: Map<string, ProfileRuntime>,
    private readonly config: () => HearthConfig,
    private readonly log: (event: Record<string, unknown>, message: string) => void,
  ) {}

  async start(): Promise<void> {
    for (const r of this.runtimes.values()) {
      const failed = await r.store.handoffs.failOrphans(
        [this.owner],
        "the gateway delivering it stopped; it may or may not have been delivered, so it is not retried",
      );
      if (failed.length > 0)
        this.log(
          { event: "handoff.orphans_failed", profile: r.profile, sessions: failed },
          "failed handoffs of a dead gateway",
        );
    }
    this.timer = setInterval(() => this.poll(), this.config().gateway.handoffPollMs);
  }

  /** Stop polling; give running deliveries `graceMs`, then abort them (they are failed, never re-queued). */
  async stop(graceMs: number): Promise<void> {
    clearInterval(this.timer);
    const settled = Promise.allSettled([...this.inFlight]);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    this.abort.abort(
      new Error("the gateway stopped during the delivery; it may or may not have arrived"),
    );
    await settled;
  }

  private polling = false;

  private poll(): void {
    if (this.polling) return;
    this.polling = true;
    void (async () => {
      try {
        for (const r of this.runtimes.values()) {
          for (const session of await r.store.handoffs.list("pending", 20)) {
            if (!(await r.store.handoffs.claim(session.id, this.owner))) continue; // another claimer won
            const job = this.deliver(r, session).finally(() => this.inFlight.delete(job));
            this.inFlight.add(job);
          }
        }
      } catch (err) {
        this.log({ event: "handoff.poll_failed", err }, "handoff poll failed; retrying");
      } finally {
        this.polling = false;
      }
    })();
  }

  private async deliver(r: ProfileRuntime, session: Session): Promise<void> {
    const platform = session.handoff?.platform ?? "";
    const beat = setInterval(
      () => void r.store.handoffs.heartbeat(session.id, this.owner).catch(() => undefined),
      HEARTBEAT_MS,
    );
    try {
      const adapter = adapterFor(this.config(), platform);
      if (!adapter)
        throw new Error(`no adapter for platform ${JSON.stringify(platform)} (gateway.adapters)`);
      const transcript = await r.store.messages.load(session.id);
      await adapter.deliver({ profile: r.profile, session, transcript, signal: this.abort.signal });
      await r.store.handoffs.complete(session.id, this.owner);
      this.log(
        { event: "handoff.completed", profile: r.profile, session: session.id, platform },
        "handoff delivered",
      );
    } catch (err) {
      await r.store.handoffs
        .fail(session.id, this.owner, (err as Error).message)
        .catch(() => undefined);
      this.log(
        {
          event: "handoff.failed",
          profile: r.profile,
          session: session.id,
          platform,
          error: (err as Error).message,
        },
        "handoff failed",
      );
    } finally {
      clearInterval(beat);
    }
  }
}

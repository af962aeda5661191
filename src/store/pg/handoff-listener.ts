/**
 * Handoff wake-ups pushed by the server (LISTEN/NOTIFY). A transition that
 * makes a handoff claimable runs `pg_notify(HANDOFF_CHANNEL, id)` in its
 * own statement (handoffs.ts), so the notification is sent only when that
 * commits. A watcher holds one LISTEN connection per store, a client of its
 * own (never a pooled one: a pool would hand the session, and its LISTEN,
 * to somebody else), and is woken on each notification.
 *
 * Notifications are a hint, never the only way work is found: one sent
 * while the connection was down is lost for good. So the watcher is told
 * when the connection is up (`live(true)`, after LISTEN took effect: it
 * then polls once, for what it missed) and when it is lost (`live(false)`:
 * it polls at its normal rate until the connection is back). The
 * connection is made again with backoff for as long as the watch lasts.
 */
import pg from "pg";
import type { HandoffWakes, HandoffWatch } from "../handoffs.js";
import { applicationName } from "./pool.js";

/**
 * The channel, scoped by PostgreSQL to the database, which holds one
 * profile's store (api.md: one database, one profile's store): a
 * notification reaches the gateways serving that profile, on any host.
 */
export const HANDOFF_CHANNEL = "hearth_handoff";

/** First wait before connecting again; doubled after each failure up to the most. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

export class HandoffListener implements HandoffWatch {
  private client: pg.Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs = RECONNECT_MIN_MS;
  /** The attempt under way, awaited by stop() so that no connection outlives it. */
  private connecting: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly wakes: HandoffWakes,
  ) {
    this.connecting = this.connect();
  }

  private async connect(): Promise<void> {
    this.retry = undefined;
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.url,
      application_name: applicationName(),
      connectionTimeoutMillis: 10_000,
      // A host lost without a reset is noticed in minutes, not hours; the
      // watcher's slow poll covers the time until then.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let gone = false;
    const lost = () => {
      if (gone) return;
      gone = true;
      void client.end().catch(() => undefined);
      if (this.client === client) {
        this.client = undefined;
        this.wakes.live(false);
      }
      this.schedule();
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", (n) => {
      if (n.channel === HANDOFF_CHANNEL) this.wakes.wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${HANDOFF_CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (gone) return;
    if (this.stopped) {
      gone = true;
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = RECONNECT_MIN_MS;
    this.wakes.live(true);
  }

  private schedule(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.connecting = this.connect();
    }, this.backoffMs);
    this.retry.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
  }

  /** Stop listening and reconnecting; ends the connection. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

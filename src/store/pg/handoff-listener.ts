/**
 * Handoff wake-ups pushed by the server (LISTEN/NOTIFY). A transition that
 * makes a handoff claimable runs `pg_notify(<channel>, id)` in its
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
 * The channel's name, computed by the server on the connection it runs on:
 * `hearth_handoff:<schema>` for the schema hearth's tables are found in
 * (current_schema(): store.pg.schema, else the connection's current one),
 * or `hearth_handoff:<md5 of it>` where that would pass PostgreSQL's 63
 * bytes. NOTIFY is scoped to the database and each profile has a schema of
 * its own there: a notification reaches the gateways serving the profile
 * it was sent for, on any host, and no other.
 */
export const HANDOFF_CHANNEL_SQL = `(SELECT 'hearth_handoff:' || CASE WHEN octet_length(s) <= 48 THEN s ELSE md5(s) END
  FROM current_schema() AS s)`;

/** The name as an identifier for LISTEN (quoted: it holds a colon). */
const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

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

  /**
   * `connection`: how to reach the server, as the store's pool does (TLS,
   * login); `channel`: asks the pool (whose connections search the store's
   * schema) for the name, once per attempt until it is known.
   */
  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly channel: () => Promise<string>,
    private readonly wakes: HandoffWakes,
  ) {
    this.connecting = this.connect();
  }

  private async connect(): Promise<void> {
    this.retry = undefined;
    if (this.stopped) return;
    const client = new pg.Client({
      ...this.connection,
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
    let channel: string | undefined;
    client.on("notification", (n) => {
      if (n.channel === channel) this.wakes.wake();
    });
    try {
      channel = await this.channel();
      await client.connect();
      await client.query(`LISTEN ${quoted(channel)}`);
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

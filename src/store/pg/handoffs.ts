import { storeClosed } from "../api.js";
import {
  type HandoffChange,
  type HandoffsSql,
  type HandoffWakes,
  type HandoffWatch,
  handoffUpdate,
} from "../handoffs.js";
import { sessionNotFound } from "../session-create.js";
import type { HandoffState, Session } from "../types.js";
import { pgSession, refuseNul } from "./convert.js";
import { HANDOFF_CHANNEL_SQL, HandoffListener } from "./handoff-listener.js";
import { OwnerPresence, ownerAlive } from "./owner-presence.js";
import { maskUrl, type PgDb } from "./pool.js";

/**
 * The handoff statements on PostgreSQL (../handoffs.ts decides), each
 * transition one conditional UPDATE on the session row. Under READ
 * COMMITTED a second UPDATE of the same row waits for the first to commit,
 * then re-evaluates its WHERE on the new row version: of two gateways (on
 * any hosts) claiming one pending row, exactly one sees
 * `handoff_state = 'pending'` and wins.
 *
 * A change that makes a row claimable (to `pending`) notifies the
 * watchers of every gateway on the database (handoff-listener.ts), in the
 * same statement: the notification is sent when, and only if, it commits.
 */
export class PgHandoffs implements HandoffsSql {
  private readonly presence: OwnerPresence;
  private readonly listeners = new Set<HandoffListener>();
  /** Closed with its store: no watch starts after (its connection would never be ended). */
  private closed = false;

  constructor(private readonly db: PgDb) {
    // Its own connections go where the pool's go, with the pool's TLS and login.
    this.presence = new OwnerPresence(db.url, db.pool.options);
  }

  /**
   * One conditional UPDATE. A change to `running` (a claim, a heartbeat)
   * first holds its owner's presence (see failOrphans), taken again if a
   * lost connection dropped it.
   */
  async transition(sessionId: string, change: HandoffChange): Promise<boolean> {
    refuseNul("owner", change.owner);
    for (const [field, value] of Object.entries(change.set)) refuseNul(field, value);
    if (change.to === "running")
      await this.presence.hold((change.owner ?? change.set.owner) as string);
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const update = handoffUpdate(sessionId, change, Date.now(), param);
    const sql =
      change.to === "pending"
        ? `WITH changed AS (${update} RETURNING id) SELECT pg_notify(${HANDOFF_CHANNEL_SQL}, id) FROM changed`
        : update;
    const { rowCount } = await this.db.query("change a handoff", sql, params);
    if (rowCount === 1) return true;
    const { rowCount: found } = await this.db.query(
      "find a session",
      "SELECT 1 FROM sessions WHERE id = $1",
      [sessionId],
    );
    if (found === 0) throw sessionNotFound(sessionId);
    return false;
  }

  async list(state: HandoffState, limit: number): Promise<Session[]> {
    const { rows } = await this.db.query(
      "list handoffs",
      "SELECT * FROM sessions WHERE handoff_state = $1 ORDER BY handoff_updated_at LIMIT $2",
      [state, limit],
    );
    return rows.map(pgSession);
  }

  /**
   * On PostgreSQL several gateways (on several hosts) serve one profile, so
   * a gateway starting up must not fail the rows another live gateway is
   * delivering. An owner is alive while some connection holds its presence
   * lock (owner-presence.ts), which claim() takes first; a row without an
   * owner, or whose owner's lock nobody holds, was left by a gateway that
   * died. The rows are locked while this decides, and each is failed only
   * if still running.
   */
  async failOrphans(
    orphaned: (owner: string | null) => boolean,
    reason: string,
  ): Promise<string[]> {
    refuseNul("reason", reason);
    return this.db.transaction("fail orphaned handoffs", async (client) => {
      const { rows } = await client.query<{ id: string; handoff_owner: string | null }>(
        `SELECT id, handoff_owner FROM sessions WHERE handoff_state = 'running'
         ORDER BY handoff_updated_at, id FOR UPDATE`,
      );
      const alive = new Map<string, boolean>();
      const failed: string[] = [];
      for (const { id, handoff_owner: owner } of rows) {
        if (!orphaned(owner)) continue;
        if (owner !== null) {
          if (!alive.has(owner)) alive.set(owner, await ownerAlive(client, owner));
          if (alive.get(owner)) continue;
        }
        await client.query(
          `UPDATE sessions SET handoff_state = 'failed', handoff_error = $1, handoff_updated_at = $2
           WHERE id = $3 AND handoff_state = 'running'`,
          [reason, Date.now(), id],
        );
        failed.push(id);
      }
      return failed;
    });
  }

  /** Wake `wakes` on every notification, on a LISTEN connection of its own (reconnected while the watch lasts). */
  watch(wakes: HandoffWakes): HandoffWatch {
    if (this.closed) throw storeClosed(maskUrl(this.db.url));
    const { password } = this.db.pool.options;
    const connection = {
      ...this.db.pool.options,
      // A pool keeps its password out of a spread (not enumerable).
      ...(password === undefined ? {} : { password }),
    };
    const listener = new HandoffListener(connection, () => this.channel(), wakes);
    this.listeners.add(listener);
    return {
      stop: () => {
        this.listeners.delete(listener);
        return listener.stop();
      },
    };
  }

  /** The LISTEN channel of this store's schema, asked of the pool once it answers. */
  private channelName: Promise<string> | undefined;
  private channel(): Promise<string> {
    this.channelName ??= this.db
      .query("name the handoff channel", `SELECT ${HANDOFF_CHANNEL_SQL} AS channel`)
      .then(({ rows }) => rows[0]?.channel as string);
    this.channelName.catch(() => {
      this.channelName = undefined;
    });
    return this.channelName;
  }

  /** Release the presence of every owner this instance claimed as, and stop every watch (the store closes). */
  async close(): Promise<void> {
    this.closed = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    await Promise.all([this.presence.close(), ...listeners.map((l) => l.stop())]);
  }
}

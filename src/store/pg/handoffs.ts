import type { Public } from "../public.js";
import type { Handoffs } from "../sqlite/handoffs.js";
import { sessionNotFound } from "../sqlite/sessions.js";
import type { HandoffState, Session } from "../types.js";
import { pgSession, refuseNul } from "./convert.js";
import { OwnerPresence, ownerAlive } from "./owner-presence.js";
import type { PgDb } from "./pool.js";

/**
 * Handoff (D5) on PostgreSQL: the same compare-and-set state machine as
 * ../handoffs.ts, each transition one conditional UPDATE on the session
 * row. Under READ COMMITTED a second UPDATE of the same row waits for the
 * first to commit, then re-evaluates its WHERE on the new row version: of
 * two gateways (on any hosts) claiming one pending row, exactly one sees
 * `handoff_state = 'pending'` and wins.
 */
export class PgHandoffs implements Public<Handoffs> {
  private readonly presence: OwnerPresence;

  constructor(private readonly db: PgDb) {
    this.presence = new OwnerPresence(db.url);
  }

  async request(sessionId: string, platform: string): Promise<boolean> {
    if (typeof platform !== "string" || platform === "")
      throw new TypeError("platform must be a non-empty string");
    return this.transition(
      sessionId,
      "handoff_state = 'pending', handoff_platform = $3, handoff_owner = NULL, handoff_error = NULL",
      "(handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))",
      [["platform", platform]],
    );
  }

  /** pending → running, owned by `owner`; this process holds `owner`'s presence first (see failOrphans). */
  async claim(sessionId: string, owner: string): Promise<boolean> {
    refuseNul("owner", owner);
    await this.presence.hold(owner);
    return this.transition(
      sessionId,
      "handoff_state = 'running', handoff_owner = $3",
      "handoff_state = 'pending'",
      [["owner", owner]],
    );
  }

  complete(sessionId: string, owner: string): Promise<boolean> {
    return this.transition(
      sessionId,
      "handoff_state = 'completed', handoff_error = NULL",
      "handoff_state = 'running' AND handoff_owner = $3",
      [["owner", owner]],
    );
  }

  fail(sessionId: string, owner: string, error: string): Promise<boolean> {
    return this.transition(
      sessionId,
      "handoff_state = 'failed', handoff_error = $4",
      "handoff_state = 'running' AND handoff_owner = $3",
      [
        ["owner", owner],
        ["error", error],
      ],
    );
  }

  /** The owner says it is still delivering; its presence is taken again if a lost connection dropped it. */
  async heartbeat(sessionId: string, owner: string): Promise<boolean> {
    refuseNul("owner", owner);
    await this.presence.hold(owner);
    return this.transition(
      sessionId,
      "handoff_state = 'running'",
      "handoff_state = 'running' AND handoff_owner = $3",
      [["owner", owner]],
    );
  }

  failPending(sessionId: string, error: string): Promise<boolean> {
    return this.transition(
      sessionId,
      "handoff_state = 'failed', handoff_error = $3",
      "handoff_state = 'pending'",
      [["error", error]],
    );
  }

  async list(state: HandoffState, limit = 100): Promise<Session[]> {
    const { rows } = await this.db.query(
      "list handoffs",
      "SELECT * FROM sessions WHERE handoff_state = $1 ORDER BY handoff_updated_at LIMIT $2",
      [state, limit],
    );
    return rows.map(pgSession);
  }

  /**
   * Fail every running handoff whose owner is neither in `liveOwners` nor
   * alive on the server's word: on PostgreSQL several gateways (on several
   * hosts) serve one profile, so a gateway starting up must not fail the
   * rows another live gateway is delivering. An owner is alive while some
   * connection holds its presence lock (owner-presence.ts), which claim()
   * takes first; a row without an owner, or whose owner's lock nobody
   * holds, was left by a gateway that died. The rows are locked while
   * this decides, and each is failed only if still running.
   */
  async failOrphans(liveOwners: readonly string[], reason: string): Promise<string[]> {
    refuseNul("reason", reason);
    return this.db.transaction("fail orphaned handoffs", async (client) => {
      const { rows } = await client.query<{ id: string; handoff_owner: string | null }>(
        `SELECT id, handoff_owner FROM sessions WHERE handoff_state = 'running'
         ORDER BY handoff_updated_at, id FOR UPDATE`,
      );
      const alive = new Map<string, boolean>();
      const failed: string[] = [];
      for (const { id, handoff_owner: owner } of rows) {
        if (owner !== null) {
          if (liveOwners.includes(owner)) continue;
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

  /** Release the presence of every owner this instance claimed as (the store closes). */
  close(): Promise<void> {
    return this.presence.close();
  }

  /** One conditional UPDATE; $1 is the session, $2 the time, $3.. the caller's values. */
  private async transition(
    sessionId: string,
    set: string,
    where: string,
    params: [field: string, value: unknown][],
  ): Promise<boolean> {
    for (const [field, value] of params) refuseNul(field, value);
    const { rowCount } = await this.db.query(
      "change a handoff",
      `UPDATE sessions SET ${set}, handoff_updated_at = $2 WHERE id = $1 AND ${where}`,
      [sessionId, Date.now(), ...params.map(([, value]) => value)],
    );
    if (rowCount === 1) return true;
    const { rowCount: found } = await this.db.query(
      "find a session",
      "SELECT 1 FROM sessions WHERE id = $1",
      [sessionId],
    );
    if (found === 0) throw sessionNotFound(sessionId);
    return false;
  }
}

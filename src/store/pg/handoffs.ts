import type { Handoffs } from "../handoffs.js";
import type { Public } from "../public.js";
import { sessionNotFound } from "../sessions.js";
import type { HandoffState, Session } from "../types.js";
import { pgSession, refuseNul } from "./convert.js";
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
  constructor(private readonly db: PgDb) {}

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

  claim(sessionId: string, owner: string): Promise<boolean> {
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

  heartbeat(sessionId: string, owner: string): Promise<boolean> {
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
   * Fail every running handoff whose owner is not in `liveOwners`: one
   * UPDATE, so a row claimed or finished meanwhile (by a live gateway on
   * another host) is left alone by its state condition.
   */
  async failOrphans(liveOwners: readonly string[], reason: string): Promise<string[]> {
    refuseNul("reason", reason);
    const { rows } = await this.db.query<{ id: string }>(
      "fail orphaned handoffs",
      `UPDATE sessions SET handoff_state = 'failed', handoff_error = $1, handoff_updated_at = $2
       WHERE handoff_state = 'running'
         AND (handoff_owner IS NULL OR NOT (handoff_owner = ANY ($3::text[])))
       RETURNING id`,
      [reason, Date.now(), [...liveOwners]],
    );
    return rows.map((r) => r.id);
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

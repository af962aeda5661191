import { type SessionRow, toSession } from "../rows.js";
import type { HandoffState, Session } from "../types.js";
import type { Access } from "./access.js";
import { sessionNotFound } from "./sessions.js";

/**
 * Handoff (D5): a compare-and-set state machine on the session row,
 * pending → running → completed | failed. Every transition is one UPDATE
 * guarded by the state (and, for a running row, the owner) it expects, in an
 * IMMEDIATE transaction; it reports whether it won. A waiter may fail only a
 * pending row; only the owner that claimed a row may complete or fail it; a
 * running row whose owner died is failed, never re-queued (it may already
 * have been delivered).
 */
export class Handoffs {
  constructor(private readonly access: Access) {}

  /** Ask for the session to be delivered on `platform`. Refuses while a handoff is pending or running. */
  async request(sessionId: string, platform: string): Promise<boolean> {
    if (typeof platform !== "string" || platform === "")
      throw new TypeError("platform must be a non-empty string");
    return this.transition(
      sessionId,
      `handoff_state = 'pending', handoff_platform = ?, handoff_owner = NULL, handoff_error = NULL`,
      `(handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))`,
      [platform],
    );
  }

  /** pending → running, owned by `owner`. Exactly one claimer wins. */
  claim(sessionId: string, owner: string): Promise<boolean> {
    return this.transition(
      sessionId,
      `handoff_state = 'running', handoff_owner = ?`,
      `handoff_state = 'pending'`,
      [owner],
    );
  }

  /** running → completed, only by its owner. */
  complete(sessionId: string, owner: string): Promise<boolean> {
    return this.transition(
      sessionId,
      `handoff_state = 'completed', handoff_error = NULL`,
      `handoff_state = 'running' AND handoff_owner = ?`,
      [],
      [owner],
    );
  }

  /** running → failed, only by its owner. */
  fail(sessionId: string, owner: string, error: string): Promise<boolean> {
    return this.transition(
      sessionId,
      `handoff_state = 'failed', handoff_error = ?`,
      `handoff_state = 'running' AND handoff_owner = ?`,
      [error],
      [owner],
    );
  }

  /** The owner of a running handoff says it is still delivering (waiters watch handoff.updatedAt). */
  heartbeat(sessionId: string, owner: string): Promise<boolean> {
    return this.transition(
      sessionId,
      `handoff_state = 'running'`,
      `handoff_state = 'running' AND handoff_owner = ?`,
      [],
      [owner],
    );
  }

  /** pending → failed: what a waiter may do when nobody claimed the row in time. Never touches a running row. */
  failPending(sessionId: string, error: string): Promise<boolean> {
    return this.transition(
      sessionId,
      `handoff_state = 'failed', handoff_error = ?`,
      `handoff_state = 'pending'`,
      [error],
    );
  }

  /** Sessions whose handoff is in `state`, oldest first. */
  async list(state: HandoffState, limit = 100): Promise<Session[]> {
    const rows = this.access
      .read()
      .stmt(`SELECT * FROM sessions WHERE handoff_state = ? ORDER BY handoff_updated_at LIMIT +?`)
      .all(state, limit) as SessionRow[];
    return rows.map(toSession);
  }

  /**
   * Fail every running handoff whose owner is not one of `liveOwners`
   * (called by a gateway at start, holding the profile's single-instance
   * lock: any running row then belongs to a gateway that died). Returns the ids.
   */
  async failOrphans(liveOwners: readonly string[], reason: string): Promise<string[]> {
    return this.access.writeTransaction((conn) => {
      const rows = conn
        .stmt(`SELECT id, handoff_owner FROM sessions WHERE handoff_state = 'running'`)
        .all() as { id: string; handoff_owner: string | null }[];
      const orphans = rows.filter(
        (r) => r.handoff_owner === null || !liveOwners.includes(r.handoff_owner),
      );
      const fail = conn.stmt(
        `UPDATE sessions SET handoff_state = 'failed', handoff_error = ?, handoff_updated_at = ?
         WHERE id = ? AND handoff_state = 'running'`,
      );
      for (const r of orphans) fail.run(reason, this.access.now(), r.id);
      return orphans.map((r) => r.id);
    });
  }

  private async transition(
    sessionId: string,
    set: string,
    where: string,
    setParams: unknown[],
    whereParams: unknown[] = [],
  ): Promise<boolean> {
    return this.access.writeTransaction((conn) => {
      if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId))
        throw sessionNotFound(sessionId);
      const changes = conn
        .stmt(`UPDATE sessions SET ${set}, handoff_updated_at = ? WHERE id = ? AND ${where}`)
        .run(...setParams, this.access.now(), sessionId, ...whereParams).changes;
      return changes === 1;
    });
  }
}

import type { HandoffState, Session } from "./types.js";

/**
 * Handoff (D5), backend-neutral: the allowed transitions are the table
 * below, written once, and handoffUpdate() builds each one's conditional
 * UPDATE for both engines (sqlite/handoffs.ts, pg/handoffs.ts run it).
 */

/** One transition: the states it may start from (null: never handed off), where it goes, what it writes. */
export interface HandoffChange {
  from: readonly (HandoffState | null)[];
  to: HandoffState;
  /** The owner a running row must have (only its owner may move it on). */
  owner?: string;
  /** Columns written with the state; null clears one, absent keeps it. */
  set: { platform?: string; owner?: string | null; error?: string | null };
}

/** Every allowed transition: a waiter may fail only a pending row; only a row's owner completes, fails or heartbeats it. */
const HANDOFF_TRANSITIONS = {
  request: (platform: string): HandoffChange => ({
    from: [null, "completed", "failed"],
    to: "pending",
    set: { platform, owner: null, error: null },
  }),
  claim: (owner: string): HandoffChange => ({ from: ["pending"], to: "running", set: { owner } }),
  complete: (owner: string): HandoffChange => ({
    from: ["running"],
    owner,
    to: "completed",
    set: { error: null },
  }),
  fail: (owner: string, error: string): HandoffChange => ({
    from: ["running"],
    owner,
    to: "failed",
    set: { error },
  }),
  heartbeat: (owner: string): HandoffChange => ({
    from: ["running"],
    owner,
    to: "running",
    set: {},
  }),
  failPending: (error: string): HandoffChange => ({
    from: ["pending"],
    to: "failed",
    set: { error },
  }),
};

/** What a store tells a handoff watcher (HandoffWatcher in the gateway). */
export interface HandoffWakes {
  /** A handoff may have become claimable: poll now. */
  wake(): void;
  /**
   * Pushed wake-ups arrive (true) or may be lost (false). While they may
   * be lost, or before the first true, the watcher polls at its normal rate.
   */
  live(up: boolean): void;
}

/** A watch in progress: stop() ends it (and any connection it holds). */
export interface HandoffWatch {
  stop(): Promise<void>;
}

/** What a backend does for Handoffs: run a change, read, fail orphans, push wake-ups. */
export interface HandoffsSql {
  /** Run handoffUpdate(change) on the session's row: whether it changed it; HEARTH_SESSION_NOT_FOUND when no such session. */
  transition(sessionId: string, change: HandoffChange): Promise<boolean>;
  /** Sessions whose handoff is in `state`, by handoff_updated_at, at most `limit`. */
  list(state: HandoffState, limit: number): Promise<Session[]>;
  /**
   * One transaction: every running row whose owner `orphaned` picks (and,
   * where the engine knows more, whose owner is not alive) failed with
   * `reason` if still running. Returns the ids.
   */
  failOrphans(orphaned: (owner: string | null) => boolean, reason: string): Promise<string[]>;
  /**
   * Optional: call `wakes.wake()` whenever a handoff becomes claimable
   * (PostgreSQL: LISTEN/NOTIFY). A backend without it pushes nothing and
   * its watchers poll as before (SQLite).
   */
  watch?(wakes: HandoffWakes): HandoffWatch;
}

/** Sessions list() returns when no limit is given. */
const DEFAULT_HANDOFF_PAGE = 100;

/**
 * The UPDATE of a change, for any engine: `param` adds a value and returns
 * its placeholder (`?` or `$n`). The time stamps handoff_updated_at.
 */
export function handoffUpdate(
  sessionId: string,
  change: HandoffChange,
  now: number,
  param: (value: unknown) => string,
): string {
  const set = [`handoff_state = '${change.to}'`];
  for (const [column, value] of Object.entries(change.set))
    set.push(`handoff_${column} = ${value === null ? "NULL" : param(value)}`);
  set.push(`handoff_updated_at = ${param(now)}`);
  const states = change.from.filter((s) => s !== null).map((s) => `'${s}'`);
  const state = change.from.includes(null)
    ? `(handoff_state IS NULL OR handoff_state IN (${states.join(", ")}))`
    : `handoff_state IN (${states.join(", ")})`;
  // Placeholders in text order: `?` numbers them by position.
  const id = param(sessionId);
  const owner = change.owner === undefined ? "" : ` AND handoff_owner = ${param(change.owner)}`;
  return `UPDATE sessions SET ${set.join(", ")} WHERE id = ${id} AND ${state}${owner}`;
}

/** A running row is an orphan candidate when it has no owner or its owner is not one of `liveOwners`. */
function orphanCandidate(liveOwners: readonly string[]): (owner: string | null) => boolean {
  return (owner) => owner === null || !liveOwners.includes(owner);
}

/**
 * Handoff (D5): a compare-and-set state machine on the session row,
 * pending → running → completed | failed. Every transition is one UPDATE
 * guarded by the state (and, for a running row, the owner) it expects; it
 * reports whether it won. A waiter may fail only a pending row; only the
 * owner that claimed a row may complete or fail it; a running row whose
 * owner died is failed, never re-queued (it may already have been delivered).
 */
export class Handoffs {
  constructor(private readonly sql: HandoffsSql) {}

  /** Ask for the session to be delivered on `platform`. Refuses while a handoff is pending or running. */
  async request(sessionId: string, platform: string): Promise<boolean> {
    if (typeof platform !== "string" || platform === "")
      throw new TypeError("platform must be a non-empty string");
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.request(platform));
  }

  /** pending → running, owned by `owner`. Exactly one claimer wins. */
  claim(sessionId: string, owner: string): Promise<boolean> {
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.claim(owner));
  }

  /** running → completed, only by its owner. */
  complete(sessionId: string, owner: string): Promise<boolean> {
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.complete(owner));
  }

  /** running → failed, only by its owner. */
  fail(sessionId: string, owner: string, error: string): Promise<boolean> {
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.fail(owner, error));
  }

  /** The owner of a running handoff says it is still delivering (waiters watch handoff.updatedAt). */
  heartbeat(sessionId: string, owner: string): Promise<boolean> {
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.heartbeat(owner));
  }

  /** pending → failed: what a waiter may do when nobody claimed the row in time. Never touches a running row. */
  failPending(sessionId: string, error: string): Promise<boolean> {
    return this.sql.transition(sessionId, HANDOFF_TRANSITIONS.failPending(error));
  }

  /**
   * Be woken when a handoff becomes claimable, where the backend can push
   * (PostgreSQL); elsewhere `wakes` is never called and the caller polls
   * at its normal rate (SQLite). Pushes are a hint: poll too, slowly.
   */
  async watch(wakes: HandoffWakes): Promise<HandoffWatch> {
    return this.sql.watch?.(wakes) ?? { stop: async () => undefined };
  }

  /** Sessions whose handoff is in `state`, oldest first. */
  async list(state: HandoffState, limit = DEFAULT_HANDOFF_PAGE): Promise<Session[]> {
    return this.sql.list(state, limit);
  }

  /**
   * Fail every running handoff whose owner is not one of `liveOwners`
   * (called by a gateway at start, holding the profile's single-instance
   * lock: any running row then belongs to a gateway that died; on
   * PostgreSQL, where several gateways serve one profile, an owner whose
   * presence some connection holds is alive too). Returns the ids.
   */
  async failOrphans(liveOwners: readonly string[], reason: string): Promise<string[]> {
    return this.sql.failOrphans(orphanCandidate(liveOwners), reason);
  }
}

import { requireString } from "./args.js";

/**
 * Permission asked before a tool acts (docs/gateway.md#permission),
 * backend-neutral. One row per tool call that asked, keyed by session and
 * call id: pending until a decision lands, compare-and-set (only the first
 * decision counts, whoever makes it: a client's answer, the deadline, a
 * cancelled turn). "Always" is a grant per session and tool, written in
 * the decision's transaction. The statements are sqlite/tool-permissions.ts
 * and pg/tool-permissions.ts (ToolPermissionsSql), the same text on both.
 */

/** What a client may answer. */
export const PERMISSION_ANSWERS = ["allow_once", "allow_always", "reject"] as const;
export type PermissionAnswer = (typeof PERMISSION_ANSWERS)[number];
/** A decision: an answer, or what hearth recorded for an unanswered request. */
export type PermissionDecision = PermissionAnswer | "expired" | "cancelled";

export interface PermissionRequestRow {
  sessionId: string;
  callId: string;
  tool: string;
  /** The call's arguments, shortened for a person to read. */
  summary: string;
  requestedAt: number;
  /** Unanswered at this time (epoch ms): recorded as expired, the call denied. */
  deadlineAt: number;
}

export interface PermissionRow extends PermissionRequestRow {
  decision: PermissionDecision | null;
  decidedAt: number | null;
}

export interface ToolPermissionsSql {
  now(): number;
  /** Insert the row unless one for (session, call) exists; the row as stored. */
  request(row: PermissionRequestRow): Promise<PermissionRow>;
  get(sessionId: string, callId: string): Promise<PermissionRow | undefined>;
  pending(sessionId: string): Promise<PermissionRow[]>;
  /** Set the decision if none is set, and with allow_always the grant, in one transaction. */
  decide(
    sessionId: string,
    callId: string,
    decision: PermissionDecision,
    at: number,
  ): Promise<PermissionRow | undefined>;
  granted(sessionId: string, tool: string): Promise<boolean>;
}

const DECISIONS: readonly string[] = [...PERMISSION_ANSWERS, "expired", "cancelled"];

export class ToolPermissions {
  constructor(private readonly sql: ToolPermissionsSql) {}

  now(): number {
    return this.sql.now();
  }

  /** Ask: the pending row (or the one already there, decided or not: a resumed turn asks again). */
  async request(row: PermissionRequestRow): Promise<PermissionRow> {
    requireString(row.sessionId, "sessionId");
    requireString(row.callId, "callId");
    requireString(row.tool, "tool");
    if (typeof row.summary !== "string") throw new TypeError("summary must be a string");
    for (const key of ["requestedAt", "deadlineAt"] as const)
      if (!Number.isSafeInteger(row[key])) throw new TypeError(`${key} must be an integer`);
    return this.sql.request(row);
  }

  async get(sessionId: string, callId: string): Promise<PermissionRow | undefined> {
    requireString(sessionId, "sessionId");
    requireString(callId, "callId");
    return this.sql.get(sessionId, callId);
  }

  /** The session's requests still waiting for an answer, oldest first. */
  async pending(sessionId: string): Promise<PermissionRow[]> {
    requireString(sessionId, "sessionId");
    return this.sql.pending(sessionId);
  }

  /**
   * Record `decision` if the request has none yet. Returns the row as it is
   * after (its decision may be an earlier one), undefined when there is no
   * such request.
   */
  async decide(
    sessionId: string,
    callId: string,
    decision: PermissionDecision,
  ): Promise<PermissionRow | undefined> {
    requireString(sessionId, "sessionId");
    requireString(callId, "callId");
    if (!DECISIONS.includes(decision))
      throw new RangeError(
        `decision must be one of ${DECISIONS.join(", ")}, not ${JSON.stringify(decision)}`,
      );
    return this.sql.decide(sessionId, callId, decision, this.sql.now());
  }

  /** Whether the session answered "always" for this tool. */
  async granted(sessionId: string, tool: string): Promise<boolean> {
    requireString(sessionId, "sessionId");
    requireString(tool, "tool");
    return this.sql.granted(sessionId, tool);
  }
}

/** The statements, the same on both backends (`?` placeholders; PostgreSQL numbers them). */
export const PERMISSION_SQL = {
  /** (session, call, tool, summary, requestedAt, deadlineAt) */
  insert: `INSERT INTO tool_permissions (session_id, call_id, tool, summary, requested_at, deadline_at)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, call_id) DO NOTHING`,
  /** (session, call) */
  get: "SELECT * FROM tool_permissions WHERE session_id = ? AND call_id = ?",
  /** (session) */
  pending:
    "SELECT * FROM tool_permissions WHERE session_id = ? AND decision IS NULL ORDER BY requested_at, call_id",
  /** (decision, at, session, call) */
  decide:
    "UPDATE tool_permissions SET decision = ?, decided_at = ? WHERE session_id = ? AND call_id = ? AND decision IS NULL",
  /** (session, tool, at) */
  grant: `INSERT INTO tool_grants (session_id, tool, granted_at) VALUES (?, ?, ?)
          ON CONFLICT (session_id, tool) DO NOTHING`,
  /** (session, tool) */
  granted: "SELECT 1 AS yes FROM tool_grants WHERE session_id = ? AND tool = ?",
} as const;

export function requestParams(r: PermissionRequestRow): unknown[] {
  return [r.sessionId, r.callId, r.tool, r.summary, r.requestedAt, r.deadlineAt];
}

/** A row as both backends select it. */
export function permissionFromColumns(r: Record<string, unknown>): PermissionRow {
  return {
    sessionId: String(r.session_id),
    callId: String(r.call_id),
    tool: String(r.tool),
    summary: String(r.summary),
    requestedAt: Number(r.requested_at),
    deadlineAt: Number(r.deadline_at),
    decision: r.decision === null ? null : (String(r.decision) as PermissionDecision),
    decidedAt: r.decided_at === null ? null : Number(r.decided_at),
  };
}

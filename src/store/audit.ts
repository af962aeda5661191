/**
 * The audit trail, whatever the backend: who deleted, archived, pruned,
 * restored, repaired or exported what, when and from where. One row per
 * act, appended, never updated; session sweeps never touch it and no
 * retention deletes it (docs/security.md#audit-trail). The statements are
 * AuditSql's (./sqlite/audit.ts, ./pg/audit.ts); a store write that is an
 * audited act (a delete, an archive, a prune) appends its row inside its
 * own transaction through the backend's insertAudit, so the act and its
 * record commit together or not at all.
 */
import { userInfo } from "node:os";
import { processKind } from "../process/kind.js";
import { invalidArg } from "./args.js";
import { type JsonObject, serializeMetadata } from "./metadata.js";

/** Every act the trail records. */
export const AUDIT_ACTIONS = [
  "session.delete",
  "session.archive",
  "session.unarchive",
  "session.prune",
  "store.restore",
  "store.repair",
  "export",
  "token.create",
  "token.revoke",
  "dashboard.login",
  "config.reload",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who acted: a local user (`id` is "<uid>:<username>") or a remote client
 * (`id` is its token family id), through which process (`via`: "cli",
 * "scheduler", "worker", "gateway", "dashboard", "acp", "library"), from
 * where (`address`: the remote address of an HTTP request).
 */
export interface AuditActor {
  kind: "local" | "token";
  id: string;
  via: string;
  address?: string | null;
}

/** One act as stored. */
export interface AuditEntry {
  id: number;
  /** When (ms since the epoch). */
  at: number;
  action: AuditAction;
  /** "failed": the act was attempted and did not happen (`detail.error` says why). */
  outcome: "ok" | "failed";
  actor: AuditActor & { address: string | null };
  /** The session ids (or other ids) acted on. */
  targets: string[];
  detail: JsonObject | null;
}

/** What record() takes. */
export interface AuditInput {
  action: AuditAction;
  outcome?: "ok" | "failed";
  /** Defaults to the local user and this process's kind (localActor()). */
  actor?: AuditActor;
  targets?: string[];
  /** A small JSON object (up to 16 KiB, as metadata). */
  detail?: JsonObject | null;
}

/** A row ready to insert (checked, serialised): what a backend's insertAudit writes. */
export interface AuditRow {
  at: number;
  action: AuditAction;
  outcome: "ok" | "failed";
  actorKind: AuditActor["kind"];
  actorId: string;
  via: string;
  address: string | null;
  targets: string;
  detail: string | null;
}

/** The columns of an audit row, in insert order (both backends). */
export const AUDIT_COLUMNS =
  "at, action, outcome, actor_kind, actor_id, via, address, targets, detail";

/** An audit row's values in AUDIT_COLUMNS order. */
export function auditValues(r: AuditRow): unknown[] {
  return [r.at, r.action, r.outcome, r.actorKind, r.actorId, r.via, r.address, r.targets, r.detail];
}

/** What a caller of an audited store write may say about who it acts for. */
export interface AuditOptions {
  actor?: AuditActor;
}

/** What a backend does for Audit. */
export interface AuditSql {
  now(): number;
  append(row: AuditRow): Promise<number>;
  /** Rows at or after `since`, newest first, `limit` of them; with `before`, ids below it. */
  list(since: number, before: number | null, limit: number): Promise<AuditEntry[]>;
}

export const MAX_AUDIT_PAGE = 1000;
const MAX_TARGETS = 10_000;

let local: AuditActor | undefined;

/** This process's local user, by uid and name, and its process kind ("library" when undeclared). */
export function localActor(): AuditActor {
  const kind = processKind();
  if (local?.via !== (kind === "unknown" ? "library" : kind)) {
    let name = "?";
    try {
      name = userInfo().username;
    } catch {
      // a uid without a passwd entry (containers): the uid alone names it
    }
    const uid = typeof process.getuid === "function" ? process.getuid() : -1;
    local = { kind: "local", id: `${uid}:${name}`, via: kind === "unknown" ? "library" : kind };
  }
  return local;
}

/** Check and serialise an act into the row a backend inserts. */
export function auditRow(input: AuditInput, at: number): AuditRow {
  if (!AUDIT_ACTIONS.includes(input.action)) {
    throw invalidArg(`action must be one of ${AUDIT_ACTIONS.join(", ")}`);
  }
  const outcome = input.outcome ?? "ok";
  if (outcome !== "ok" && outcome !== "failed") {
    throw invalidArg('outcome must be "ok" or "failed"');
  }
  const actor = input.actor ?? localActor();
  if (
    (actor.kind !== "local" && actor.kind !== "token") ||
    typeof actor.id !== "string" ||
    typeof actor.via !== "string" ||
    (actor.address != null && typeof actor.address !== "string")
  ) {
    throw invalidArg("actor must be { kind: 'local' | 'token', id, via, address? } of strings");
  }
  const targets = input.targets ?? [];
  if (
    !Array.isArray(targets) ||
    targets.length > MAX_TARGETS ||
    !targets.every((t) => typeof t === "string")
  ) {
    throw invalidArg(`targets must be an array of at most ${MAX_TARGETS} strings`);
  }
  return {
    at,
    action: input.action,
    outcome,
    actorKind: actor.kind,
    actorId: actor.id,
    via: actor.via,
    address: actor.address ?? null,
    targets: JSON.stringify(targets),
    detail: serializeMetadata(input.detail, "detail"),
  };
}

/** `row` naming `targets` (ids a backend learnt inside the act's transaction). */
export function withTargets(row: AuditRow, targets: string[]): AuditRow {
  return { ...row, targets: JSON.stringify(targets) };
}

/** A stored row (columns as numbers and text) as an AuditEntry. */
export function toAuditEntry(r: Record<string, unknown>): AuditEntry {
  return {
    id: Number(r.id),
    at: Number(r.at),
    action: r.action as AuditAction,
    outcome: r.outcome as AuditEntry["outcome"],
    actor: {
      kind: r.actor_kind as AuditActor["kind"],
      id: r.actor_id as string,
      via: r.via as string,
      address: (r.address as string | null) ?? null,
    },
    targets: JSON.parse(r.targets as string) as string[],
    detail: r.detail === null ? null : (JSON.parse(r.detail as string) as JsonObject),
  };
}

/** The audit trail of a store: append an act, list them newest first. */
export class Audit {
  constructor(private readonly sql: AuditSql) {}

  /** Append one act (after it happened, or failed); returns the row's id. */
  async record(input: AuditInput): Promise<number> {
    return this.sql.append(auditRow(input, this.sql.now()));
  }

  /**
   * Acts newest first: `since` (ms) keeps those at or after it; `limit`
   * (1 to 1000, default 100); `before` (an id from a previous page) pages on.
   */
  async list(
    options: { since?: number; limit?: number; before?: number } = {},
  ): Promise<AuditEntry[]> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE) {
      throw new RangeError(`options.limit must be an integer from 1 to ${MAX_AUDIT_PAGE}`);
    }
    const since = options.since ?? 0;
    if (!Number.isFinite(since)) throw new RangeError("options.since must be a time in ms");
    const before = options.before ?? null;
    if (before !== null && !Number.isSafeInteger(before)) {
      throw new RangeError("options.before must be an audit row id");
    }
    return this.sql.list(since, before, limit);
  }
}

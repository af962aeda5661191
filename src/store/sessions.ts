/**
 * Sessions, whatever the backend: the public API (argument checks, limits,
 * list cursors and pages, the pruning of lineages) written once, on a
 * SessionsSql that each backend implements with its SQL alone
 * (./sqlite/sessions.ts, ./pg/sessions.ts). Rules that must hold inside a
 * backend's transaction live in ./session-create.ts and ./prune.ts, and
 * both backends call them from there.
 */
import { requireString } from "./args.js";
import { type AuditOptions, type AuditRow, auditRow, withTargets } from "./audit.js";
import { checkOwnerId, type JsonObject, serializeMetadata } from "./metadata.js";
import {
  type LineageRow,
  lineages,
  type PruneOptions,
  type PruneResult,
  prunable,
  type SessionFingerprint,
} from "./prune.js";
import {
  type CreateOptions,
  normalizeTitle,
  type SessionInsert,
  sessionInsert,
} from "./session-create.js";
import { type ParamStyle, SqlParams } from "./sql.js";
import type { ListSessionsOptions, NewSession, Page, Session, TitleSource } from "./types.js";

const MAX_PAGE = 500;

/** A session's flag columns. */
export type SessionFlag = "pinned" | "archived" | "hidden";

/**
 * What a backend does for Sessions: each method is one read, or one write
 * transaction, with the arguments already checked. A missing session is
 * HEARTH_SESSION_NOT_FOUND (sessionNotFound) unless the method says otherwise.
 */
export interface SessionsSql {
  /** How this engine writes a statement parameter. */
  readonly paramStyle: ParamStyle;
  /** The id column as this engine orders ids bytewise ("id", or `id COLLATE "C"`). */
  readonly idKey: string;
  /** The clock of this store (ms). */
  now(): number;
  /** The session, or null when absent. */
  get(id: string): Promise<Session | null>;
  require(id: string): Promise<Session>;
  /**
   * Insert `row` in one transaction, after checking there the id
   * (adoptExisting) and the parent (unknownParent); the title follows
   * TitleTries. With `getOrCreate`, a session already stored is first
   * looked up with one read and no write transaction.
   */
  insert(row: SessionInsert, options: CreateOptions & { getOrCreate?: boolean }): Promise<Session>;
  /** The newest open session of (source, chat key), created in the same transaction when there is none. */
  resolveChat(platform: string, chatKey: string): Promise<Session>;
  /** Run `select` (a statement of `params`' style) with a LIMIT of `limit` appended. */
  list(select: string, params: SqlParams, limit: number): Promise<Session[]>;
  /**
   * Set the normalized title, unless titleStays() (then the session is
   * returned as it is). With `metadata` (checked, not serialized), its keys
   * are merged into the session's metadata in the same write: a value
   * another writer stored meanwhile is never overwritten by a stale copy.
   */
  rename(
    id: string,
    title: string | null,
    source: TitleSource,
    metadata?: JsonObject,
  ): Promise<Session>;
  /**
   * Set a flag; a title that becomes visible and is taken is HEARTH_TITLE_TAKEN.
   * With `audit`, that row is appended in the same transaction.
   */
  setFlag(id: string, column: SessionFlag, value: boolean, audit?: AuditRow): Promise<Session>;
  update(id: string, column: "metadata" | "owner_id", value: string | null): Promise<Session>;
  end(id: string, reason: string): Promise<Session>;
  resume(id: string): Promise<Session>;
  /** Whether a session was deleted (false: there was none); `audit` is appended in the delete's transaction when it deleted. */
  delete(id: string, audit: AuditRow): Promise<boolean>;
  /**
   * The unpinned sessions without message rows, last active at or before
   * `cutoff`: deleted unless `dryRun`, with `audit` naming them appended in
   * the same transaction when there were any.
   */
  deleteEmpty(cutoff: number, dryRun: boolean, audit: AuditRow): Promise<string[]>;
  /** Every session's lineage columns (`dryRun` false: the store must be able to write). */
  lineageRows(dryRun: boolean): Promise<LineageRow[]>;
  /** Delete the lineage `ids` and append `audit`, in one transaction, if each still exists and `qualifies`; whether it did. */
  deleteLineage(
    ids: string[],
    qualifies: (r: LineageRow) => boolean,
    audit: AuditRow,
  ): Promise<boolean>;
  /** End the open sessions last active at or before `cutoff` (reason "idle"): their ids. */
  endIdle(cutoff: number): Promise<string[]>;
  fingerprint(id: string): Promise<SessionFingerprint | undefined>;
  /** Delete the session and append `audit`, in one transaction, if it is unchanged() against `expected`. */
  deleteIfUnchanged(expected: SessionFingerprint, audit: AuditRow): Promise<boolean>;
}

export class Sessions {
  constructor(private readonly sql: SessionsSql) {}

  /**
   * Create a session. A taken id is HEARTH_SESSION_EXISTS, a parentId that
   * names no session HEARTH_UNKNOWN_PARENT; a taken user title is
   * HEARTH_TITLE_TAKEN, a taken automatic one gets a " (2)" suffix.
   */
  async create(input: NewSession = {}, options: CreateOptions = {}): Promise<Session> {
    return this.sql.insert(sessionInsert(input), options);
  }

  /**
   * The session with this id, created from `input` when there is none (in
   * one transaction: concurrent callers get the same session). An existing
   * session is returned as it is; `input` applies only to a creation.
   */
  async getOrCreate(
    id: string,
    input: Omit<NewSession, "id"> = {},
    options: CreateOptions = {},
  ): Promise<Session> {
    requireString(id, "id");
    return this.sql.insert(sessionInsert({ ...input, id }), { ...options, getOrCreate: true });
  }

  /** Replace the session's metadata (a plain JSON object up to 16 KiB, or null to clear it). */
  async setMetadata(id: string, metadata: JsonObject | null): Promise<Session> {
    requireString(id, "id");
    return this.sql.update(id, "metadata", serializeMetadata(metadata, "metadata"));
  }

  /** Set or clear the session's owner id. */
  async setOwner(id: string, ownerId: string | null): Promise<Session> {
    requireString(id, "id");
    return this.sql.update(id, "owner_id", checkOwnerId(ownerId, "ownerId"));
  }

  /**
   * The open session of a chat on a platform (source + chat key), created
   * in the same transaction when there is none, so concurrent first
   * messages of a chat share one session.
   */
  async resolveChat(platform: string, chatKey: string): Promise<Session> {
    if (
      typeof platform !== "string" ||
      platform === "" ||
      typeof chatKey !== "string" ||
      chatKey === ""
    ) {
      throw new TypeError("platform and chat must be non-empty strings");
    }
    return this.sql.resolveChat(platform, chatKey);
  }

  async get(id: string): Promise<Session | null> {
    requireString(id, "id");
    return this.sql.get(id);
  }

  /** Like get(), but a missing session is a HEARTH_SESSION_NOT_FOUND error. */
  async require(id: string): Promise<Session> {
    requireString(id, "id");
    return this.sql.require(id);
  }

  /** Sessions, newest activity first, a page at a time. */
  async list(options: ListSessionsOptions = {}): Promise<Page<Session>> {
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new RangeError(`options.limit must be an integer from 1 to ${MAX_PAGE}, got ${limit}`);
    }
    const column = options.sort === "created" ? "created_at" : "last_activity_at";
    if (options.sort !== undefined && options.sort !== "created" && options.sort !== "activity") {
      throw new RangeError(
        `options.sort must be "activity" or "created", got ${String(options.sort)}`,
      );
    }
    const where: string[] = [];
    const p = new SqlParams(this.sql.paramStyle);
    const id = this.sql.idKey;
    if (!options.includeArchived) where.push("archived = 0");
    if (!options.includeHidden) where.push("hidden = 0");
    if (options.source !== undefined) where.push(`source = ${p.add(options.source)}`);
    if (options.chatKey !== undefined) where.push(`chat_key = ${p.add(options.chatKey)}`);
    if (options.ended !== undefined)
      where.push(options.ended ? "ended_at IS NOT NULL" : "ended_at IS NULL");
    if (options.pinned !== undefined) where.push(`pinned = ${p.add(options.pinned ? 1 : 0)}`);
    if (options.ownerId !== undefined)
      where.push(`owner_id = ${p.add(checkOwnerId(options.ownerId, "options.ownerId"))}`);
    if (options.cursor) {
      const [value, after] = decodeCursor(options.cursor);
      where.push(
        `(${column} < ${p.add(value)} OR (${column} = ${p.add(value)} AND ${id} < ${p.add(after)}))`,
      );
    }
    const select = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${column} DESC, ${id} DESC`;
    const rows = await this.sql.list(select, p, limit + 1);
    const last = rows.length > limit ? rows[limit - 1]! : undefined;
    return {
      items: rows.slice(0, limit),
      nextCursor: last
        ? encodeCursor(column === "created_at" ? last.createdAt : last.lastActivityAt, last.id)
        : null,
    };
  }

  /**
   * Set the title. An automatic title never replaces one a user gave; a
   * user title taken by another visible session is HEARTH_TITLE_TAKEN, an
   * automatic one gets a " (2)", " (3)", ... suffix instead. With
   * `options.metadata`, its keys are merged (shallowly) into the session's
   * metadata in the same write, and only when the title is set: keys to
   * record about the title (who gave it) without a second write that could
   * overwrite another writer's metadata. Merged metadata over
   * MAX_METADATA_BYTES is a RangeError, and nothing changes.
   */
  async rename(
    id: string,
    title: string | null,
    source: TitleSource = "user",
    options: { metadata?: JsonObject } = {},
  ): Promise<Session> {
    requireString(id, "id");
    const { metadata } = options;
    if (metadata !== undefined) serializeMetadata(metadata, "options.metadata");
    // No key to merge: a plain rename (the metadata stays as it is, null included).
    const patch = metadata && Object.keys(metadata).length > 0 ? metadata : undefined;
    return this.sql.rename(id, normalizeTitle(title), source, patch);
  }

  async setPinned(id: string, pinned: boolean): Promise<Session> {
    requireString(id, "id");
    return this.sql.setFlag(id, "pinned", pinned);
  }

  /** Archive or unarchive; recorded in the audit trail in the same transaction. */
  async setArchived(id: string, archived: boolean, options?: AuditOptions): Promise<Session> {
    requireString(id, "id");
    const action = archived ? "session.archive" : "session.unarchive";
    return this.sql.setFlag(id, "archived", archived, this.audit(action, options, [id]));
  }

  async setHidden(id: string, hidden: boolean): Promise<Session> {
    requireString(id, "id");
    return this.sql.setFlag(id, "hidden", hidden);
  }

  /** Mark the session ended with a reason ("idle", "user", "compacted", ...). */
  async end(id: string, reason: string): Promise<Session> {
    requireString(id, "id");
    return this.sql.end(id, reason);
  }

  /** Reopen an ended session (resume). */
  async resume(id: string): Promise<Session> {
    requireString(id, "id");
    return this.sql.resume(id);
  }

  /**
   * Delete a session and every message in it, history included. Returns
   * false when absent. The audit trail records it in the same transaction.
   */
  async delete(id: string, options?: AuditOptions): Promise<boolean> {
    requireString(id, "id");
    return this.sql.delete(id, this.audit("session.delete", options, [id]));
  }

  /**
   * Delete sessions that have no message rows at all (D2). Emptiness is an
   * EXISTS probe, so a rewound or compacted session (all history, no live
   * messages) is never empty. Pinned sessions are kept.
   */
  async deleteEmpty(
    options: { olderThanMs?: number; dryRun?: boolean } & AuditOptions = {},
  ): Promise<string[]> {
    const olderThanMs = options.olderThanMs ?? 0;
    const audit = this.audit("session.prune", options, [], { empty: true, olderThanMs });
    return this.sql.deleteEmpty(this.sql.now() - olderThanMs, !!options.dryRun, audit);
  }

  /**
   * Delete ended sessions older than a cutoff. A compaction lineage
   * (sessions linked by parent_id) goes whole, in one transaction, or not at
   * all: it is deleted only when every member qualifies, and each member is
   * checked again inside the transaction (a member that resumed meanwhile
   * keeps the whole lineage).
   */
  async prune(options: PruneOptions & AuditOptions): Promise<PruneResult> {
    const qualifies = prunable(options, this.sql.now() - options.olderThanMs);
    const dryRun = options.dryRun === true;
    const result: PruneResult = { sessions: [], lineages: 0, keptLineages: 0 };
    const audit = this.audit("session.prune", options, [], { olderThanMs: options.olderThanMs });
    for (const members of lineages(await this.sql.lineageRows(dryRun))) {
      if (!members.every(qualifies)) {
        if (members.some(qualifies)) result.keptLineages++;
        continue;
      }
      const ids = members.map((m) => m.id);
      if (!dryRun && !(await this.sql.deleteLineage(ids, qualifies, withTargets(audit, ids)))) {
        result.keptLineages++;
        continue;
      }
      result.sessions.push(...ids);
      result.lineages++;
    }
    return result;
  }

  /** End open sessions idle for at least `idleMs` with reason "idle" (resume reopens them). */
  async endIdle(idleMs: number): Promise<string[]> {
    return this.sql.endIdle(this.sql.now() - idleMs);
  }

  /** What deleteIfUnchanged compares: any change to the session or its messages changes it. */
  async fingerprint(id: string): Promise<SessionFingerprint | undefined> {
    requireString(id, "id");
    return this.sql.fingerprint(id);
  }

  /** Delete the session only if it still matches `expected` (compare-and-set); audited as delete(). */
  async deleteIfUnchanged(expected: SessionFingerprint, options?: AuditOptions): Promise<boolean> {
    const audit = this.audit("session.delete", options, [expected.id], { ifUnchanged: true });
    return this.sql.deleteIfUnchanged(expected, audit);
  }

  /** The audit row of an act on sessions, stamped now (the backend appends it in the act's transaction). */
  private audit(
    action: "session.delete" | "session.archive" | "session.unarchive" | "session.prune",
    options: AuditOptions | undefined,
    targets: string[],
    detail?: JsonObject,
  ): AuditRow {
    return auditRow({ action, actor: options?.actor, targets, detail }, this.sql.now());
  }
}

/** A keyset cursor of sessions.list() (both backends). */
export function encodeCursor(value: number, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString("base64url");
}

export function decodeCursor(cursor: string): [number, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === "number" &&
      typeof parsed[1] === "string"
    ) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // fall through to the RangeError below
  }
  throw new RangeError("options.cursor is not a cursor returned by sessions.list()");
}

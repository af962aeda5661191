import { nodeCrypto } from "../../builtins.js";
import { requireString } from "../args.js";
import { checkOwnerId, type JsonObject, serializeMetadata } from "../metadata.js";
import { type SessionRow, toSession } from "../rows.js";
import type { ListSessionsOptions, NewSession, Page, Session, TitleSource } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import {
  deleteIfUnchanged,
  endIdleSessions,
  fingerprint,
  type PruneOptions,
  type PruneResult,
  pruneSessions,
  type SessionFingerprint,
} from "./prune.js";
import {
  type CreateOptions,
  createSession,
  normalizeTitle,
  requireOn,
  sessionNotFound,
  titleError,
} from "./session-create.js";

const MAX_PAGE = 500;

export class Sessions {
  constructor(private readonly access: Access) {}

  /**
   * Create a session. A taken id is HEARTH_SESSION_EXISTS, a parentId that
   * names no session HEARTH_UNKNOWN_PARENT; a taken user title is
   * HEARTH_TITLE_TAKEN, a taken automatic one gets a " (2)" suffix.
   */
  async create(input: NewSession = {}, options: CreateOptions = {}): Promise<Session> {
    return createSession(this.access, input, options);
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
    return createSession(this.access, { ...input, id }, { ...options, getOrCreate: true });
  }

  /** Replace the session's metadata (a plain JSON object up to 16 KiB, or null to clear it). */
  async setMetadata(id: string, metadata: JsonObject | null): Promise<Session> {
    requireString(id, "id");
    const json = serializeMetadata(metadata, "metadata");
    return this.update(id, "metadata", json);
  }

  /** Set or clear the session's owner id. */
  async setOwner(id: string, ownerId: string | null): Promise<Session> {
    requireString(id, "id");
    return this.update(id, "owner_id", checkOwnerId(ownerId, "ownerId"));
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
    const find =
      "SELECT * FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1";
    // The common case, an open session, is one read and no write transaction.
    const known = this.access.read().stmt(find).get(platform, chatKey) as SessionRow | undefined;
    if (known) return toSession(known);
    const id = await this.access.writeTransaction((conn) => {
      const open = conn.stmt(find).get(platform, chatKey) as { id: string } | undefined;
      if (open) return open.id;
      const fresh = nodeCrypto().randomUUID();
      const now = this.access.now();
      conn
        .stmt(
          `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(fresh, this.access.profile, platform, chatKey, now, now, now);
      return fresh;
    });
    return this.requireOn(this.access.write(), id);
  }

  async get(id: string): Promise<Session | null> {
    requireString(id, "id");
    const row = this.access.read().stmt("SELECT * FROM sessions WHERE id = ?").get(id);
    return row ? toSession(row as SessionRow) : null;
  }

  /** Like get(), but a missing session is a HEARTH_SESSION_NOT_FOUND error. */
  async require(id: string): Promise<Session> {
    requireString(id, "id");
    return this.requireOn(this.access.read(), id);
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
    const params: unknown[] = [];
    if (!options.includeArchived) where.push("archived = 0");
    if (!options.includeHidden) where.push("hidden = 0");
    if (options.source !== undefined) where.push("source = ?") && params.push(options.source);
    if (options.chatKey !== undefined) where.push("chat_key = ?") && params.push(options.chatKey);
    if (options.ended !== undefined)
      where.push(options.ended ? "ended_at IS NOT NULL" : "ended_at IS NULL");
    if (options.pinned !== undefined)
      where.push("pinned = ?") && params.push(options.pinned ? 1 : 0);
    if (options.ownerId !== undefined)
      where.push("owner_id = ?") && params.push(checkOwnerId(options.ownerId, "options.ownerId"));
    if (options.cursor) {
      const [value, id] = decodeCursor(options.cursor);
      where.push(`(${column} < ? OR (${column} = ? AND id < ?))`);
      params.push(value, value, id);
    }
    const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${column} DESC, id DESC LIMIT +?`;
    const rows = this.access
      .read()
      .stmt(sql)
      .all(...params, limit + 1) as SessionRow[];
    const items = rows.slice(0, limit).map(toSession);
    const last = rows.length > limit ? rows[limit - 1]! : undefined;
    return {
      items,
      nextCursor: last ? encodeCursor(last[column], last.id) : null,
    };
  }

  /**
   * Set the title. An automatic title never replaces one a user gave; a
   * user title taken by another visible session is HEARTH_TITLE_TAKEN, an
   * automatic one gets a " (2)", " (3)", ... suffix instead.
   */
  async rename(id: string, title: string | null, source: TitleSource = "user"): Promise<Session> {
    requireString(id, "id");
    const normalized = normalizeTitle(title);
    await this.access.writeTransaction((conn) => {
      const current = this.requireOn(conn, id);
      if (source === "auto" && current.titleSource === "user") return;
      let candidate = normalized;
      for (let n = 2; ; n++) {
        try {
          conn
            .stmt("UPDATE sessions SET title = ?, title_source = ?, updated_at = ? WHERE id = ?")
            .run(candidate, candidate === null ? null : source, this.access.now(), id);
          return;
        } catch (err) {
          const taken = titleError(err, candidate);
          if (!taken || source === "user" || n > 1000) throw taken ?? err;
          candidate = `${normalized} (${n})`;
        }
      }
    });
    return this.requireOn(this.access.write(), id);
  }

  async setPinned(id: string, pinned: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "pinned", pinned);
  }

  async setArchived(id: string, archived: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "archived", archived);
  }

  async setHidden(id: string, hidden: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "hidden", hidden);
  }

  /** Mark the session ended with a reason ("idle", "user", "compacted", ...). */
  async end(id: string, reason: string): Promise<Session> {
    requireString(id, "id");
    await this.access.writeTransaction((conn) => {
      this.requireOn(conn, id);
      const now = this.access.now();
      conn
        .stmt("UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? WHERE id = ?")
        .run(now, reason, now, id);
    });
    return this.requireOn(this.access.write(), id);
  }

  /** Reopen an ended session (resume). */
  async resume(id: string): Promise<Session> {
    requireString(id, "id");
    await this.access.writeTransaction((conn) => {
      this.requireOn(conn, id);
      const now = this.access.now();
      conn
        .stmt(
          "UPDATE sessions SET ended_at = NULL, end_reason = NULL, updated_at = ?, last_activity_at = ? WHERE id = ?",
        )
        .run(now, now, id);
    });
    return this.requireOn(this.access.write(), id);
  }

  /** Delete a session and every message in it, history included. Returns false when absent. */
  async delete(id: string): Promise<boolean> {
    requireString(id, "id");
    return this.access.writeTransaction(
      (conn) => conn.stmt("DELETE FROM sessions WHERE id = ?").run(id).changes === 1,
    );
  }

  /**
   * Delete sessions that have no message rows at all (D2). Emptiness is an
   * EXISTS probe, so a rewound or compacted session (all history, no live
   * messages) is never empty. Pinned sessions are kept.
   */
  async deleteEmpty(options: { olderThanMs?: number; dryRun?: boolean } = {}): Promise<string[]> {
    const cutoff = this.access.now() - (options.olderThanMs ?? 0);
    const select = `SELECT id FROM sessions s
      WHERE pinned = 0 AND last_activity_at <= ?
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)`;
    if (options.dryRun) {
      return (this.access.read().stmt(select).all(cutoff) as { id: string }[]).map((r) => r.id);
    }
    return this.access.writeTransaction((conn) => {
      const ids = (conn.stmt(select).all(cutoff) as { id: string }[]).map((r) => r.id);
      const del = conn.stmt(
        "DELETE FROM sessions WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)",
      );
      for (const id of ids) del.run(id, id);
      return ids;
    });
  }

  /** Delete ended sessions older than a cutoff, compaction lineages whole or not at all. */
  prune(options: PruneOptions): Promise<PruneResult> {
    return pruneSessions(this.access, options);
  }

  /** End open sessions idle for at least `idleMs` with reason "idle" (resume reopens them). */
  endIdle(idleMs: number): Promise<string[]> {
    return endIdleSessions(this.access, idleMs);
  }

  /** What deleteIfUnchanged compares: any change to the session or its messages changes it. */
  async fingerprint(id: string): Promise<SessionFingerprint | undefined> {
    requireString(id, "id");
    return fingerprint(this.access, id);
  }

  /** Delete the session only if it still matches `expected` (compare-and-set). */
  deleteIfUnchanged(expected: SessionFingerprint): Promise<boolean> {
    return deleteIfUnchanged(this.access, expected);
  }

  private async setFlag(id: string, column: "pinned" | "archived" | "hidden", value: boolean) {
    await this.access.writeTransaction((conn) => {
      this.requireOn(conn, id);
      try {
        conn
          .stmt(`UPDATE sessions SET ${column} = ?, updated_at = ? WHERE id = ?`)
          .run(value ? 1 : 0, this.access.now(), id);
      } catch (err) {
        const current = this.requireOn(conn, id);
        throw titleError(err, current.title) ?? err;
      }
    });
    return this.requireOn(this.access.write(), id);
  }

  private async update(id: string, column: "metadata" | "owner_id", value: string | null) {
    await this.access.writeTransaction((conn) => {
      this.requireOn(conn, id);
      conn
        .stmt(`UPDATE sessions SET ${column} = ?, updated_at = ? WHERE id = ?`)
        .run(value, this.access.now(), id);
    });
    return this.requireOn(this.access.write(), id);
  }

  private requireOn(conn: Connection, id: string): Session {
    return requireOn(conn, id);
  }
}

export { sessionNotFound };

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

import { createHash } from "node:crypto";
import type { Public } from "../public.js";
import { MESSAGE_COLUMNS } from "../rows.js";
import type { Browse, BrowseOptions } from "../sqlite/browse.js";
import { SESSION_STATES } from "../sqlite/browse.js";
import { sessionNotFound } from "../sqlite/sessions.js";
import type { Message, Session } from "../types.js";
import { int, pgMessage, pgSession } from "./convert.js";
import type { PgDb } from "./pool.js";

/** Every message column but the search index (content_tsv), which would only cost transfer. */
const COLUMNS = `session_id, ${MESSAGE_COLUMNS}`;

/**
 * Reads for people browsing a store (the dashboard) on PostgreSQL, as
 * ../browse.ts. Text ordering and keyset comparisons use COLLATE "C", the
 * byte order SQLite's BINARY collation gives, whatever the database's
 * default collation is.
 */
export class PgBrowse implements Public<Browse> {
  constructor(private readonly db: PgDb) {}

  async sessions(options: BrowseOptions): Promise<Session[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    switch (options.state ?? "visible") {
      case "visible":
        where.push("archived = 0", "hidden = 0");
        break;
      case "open":
        where.push("archived = 0", "hidden = 0", "ended_at IS NULL");
        break;
      case "ended":
        where.push("archived = 0", "hidden = 0", "ended_at IS NOT NULL");
        break;
      case "pinned":
        where.push("pinned = 1", "hidden = 0");
        break;
      case "archived":
        where.push("archived = 1");
        break;
      case "hidden":
        where.push("hidden = 1");
        break;
      case "all":
        break;
      default:
        throw new RangeError(`state must be one of ${SESSION_STATES.join(", ")}`);
    }
    if (options.source !== undefined) where.push(`source = ${p(options.source)}`);
    if (options.text !== undefined && options.text !== "") {
      // ILIKE (SQLite's LIKE ignores case too) with an escape character: the text is matched literally.
      const escaped = options.text.replace(/[\\%_]/g, (c) => `\\${c}`);
      where.push(
        `(title ILIKE ${p(`%${escaped}%`)} ESCAPE '\\' OR id ILIKE ${p(`${escaped}%`)} ESCAPE '\\')`,
      );
    }
    if (options.activeSince !== undefined)
      where.push(`last_activity_at >= ${p(options.activeSince)}`);
    if (options.activeBefore !== undefined)
      where.push(`last_activity_at < ${p(options.activeBefore)}`);
    if (options.after) {
      const at = p(options.after.lastActivityAt);
      where.push(
        `(last_activity_at < ${at} OR (last_activity_at = ${at} AND id COLLATE "C" < ${p(options.after.id)}))`,
      );
    }
    const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY last_activity_at DESC, id COLLATE "C" DESC LIMIT ${p(options.limit)}`;
    const { rows } = await this.db.query("browse sessions", sql, params);
    return rows.map(pgSession);
  }

  async sessionsById(ids: readonly string[]): Promise<Session[]> {
    const wanted = [...new Set(ids)];
    const { rows } = await this.db.query(
      "read sessions by id",
      "SELECT * FROM sessions WHERE id = ANY ($1::text[])",
      [wanted],
    );
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    return wanted.flatMap((id) => {
      const row = byId.get(id);
      return row ? [pgSession(row)] : [];
    });
  }

  async children(id: string, limit = 50): Promise<Session[]> {
    const { rows } = await this.db.query(
      "read child sessions",
      "SELECT * FROM sessions WHERE parent_id = $1 ORDER BY created_at DESC LIMIT $2",
      [id, limit],
    );
    return rows.map(pgSession);
  }

  async transcript(
    sessionId: string,
    options: { limit: number; before?: number; includeHistory?: boolean },
  ): Promise<Message[]> {
    const before = options.before ?? Number.MAX_SAFE_INTEGER;
    // $2 is a bigint: the default bound is beyond the INTEGER ordinal column's range.
    const { rows } = await this.db.query(
      "read a transcript page",
      options.includeHistory
        ? `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND ordinal < $2::bigint ORDER BY ordinal DESC LIMIT $3`
        : `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND active = 1 AND ordinal < $2::bigint ORDER BY ordinal DESC LIMIT $3`,
      [sessionId, before, options.limit],
    );
    if (rows.length === 0) {
      const found = await this.db.query("find a session", "SELECT 1 FROM sessions WHERE id = $1", [
        sessionId,
      ]);
      if (found.rowCount === 0) throw sessionNotFound(sessionId);
    }
    return rows.map(pgMessage);
  }

  /**
   * A number that changes whenever a write transaction on the server
   * (from any process on any host) begins or ends: a hash of
   * pg_current_snapshot() (xmin, xmax and the transactions in progress).
   * No table is read. Writes to other databases on the same server change
   * it too: a live view then re-reads once for nothing, never misses a
   * change (docs/api.md).
   */
  async dataVersion(): Promise<number> {
    const { rows } = await this.db.query(
      "probe for changes",
      "SELECT pg_current_snapshot()::text AS snapshot",
    );
    const digest = createHash("sha256").update(String(rows[0]?.snapshot)).digest();
    return digest.readUIntBE(0, 6);
  }

  async lastMessageId(): Promise<number> {
    const { rows } = await this.db.query(
      "read the last message id",
      "SELECT coalesce(max(id), 0) AS id FROM messages",
    );
    return int(rows[0]?.id);
  }

  async messagesAfter(
    afterId: number,
    limit: number,
    only: { uptoId?: number; sessionIds?: readonly string[] } = {},
  ): Promise<Message[]> {
    const upto = only.uptoId ?? Number.MAX_SAFE_INTEGER;
    const { rows } = only.sessionIds
      ? await this.db.query(
          "read new messages",
          `SELECT ${COLUMNS} FROM messages WHERE id > $1 AND id <= $2
           AND session_id = ANY ($3::text[]) ORDER BY id LIMIT $4`,
          [afterId, upto, [...only.sessionIds], limit],
        )
      : await this.db.query(
          "read new messages",
          `SELECT ${COLUMNS} FROM messages WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`,
          [afterId, upto, limit],
        );
    return rows.map(pgMessage);
  }

  async platforms(): Promise<string[]> {
    const { rows } = await this.db.query(
      "list platforms",
      `SELECT source FROM (SELECT DISTINCT source FROM sessions) s
       ORDER BY source COLLATE "C" LIMIT 200`,
    );
    return rows.map((r) => r.source as string);
  }
}

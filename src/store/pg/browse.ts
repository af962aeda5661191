import { createHash } from "node:crypto";
import {
  type ActivityRange,
  countsFrom,
  countsSql,
  latenciesFrom,
  latencySql,
  usageFrom,
  usageSql,
} from "../activity.js";
import type { BrowseSql, MessageRange, SessionFilter, TranscriptPage } from "../browse.js";
import { MESSAGE_COLUMNS } from "../rows.js";
import type { Message, Session } from "../types.js";
import { int, pgMessage, pgSession } from "./convert.js";
import type { PgDb } from "./pool.js";

/** Every message column but the search index (content_tsv), which would only cost transfer. */
const COLUMNS = `session_id, ${MESSAGE_COLUMNS}`;

/**
 * The reads of a browse (../browse.ts) on PostgreSQL. Text ordering and
 * keyset comparisons use COLLATE "C", the byte order SQLite's BINARY
 * collation gives, whatever the database's default collation is.
 */
export class PgBrowse implements BrowseSql {
  constructor(private readonly db: PgDb) {}

  async sessions(filter: SessionFilter): Promise<Session[]> {
    const where = [...filter.state];
    const params: unknown[] = [];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.source !== undefined) where.push(`source = ${p(filter.source)}`);
    // ILIKE: SQLite's LIKE ignores case too.
    if (filter.like) {
      const { title, id } = filter.like;
      const [t, i] = [p(title), p(id)];
      where.push(
        `(title ILIKE ${t} ESCAPE '\\' OR chat_key ILIKE ${t} ESCAPE '\\'
          OR id ILIKE ${i} ESCAPE '\\' OR source ILIKE ${i} ESCAPE '\\')`,
      );
    }
    if (filter.activeSince !== undefined)
      where.push(`last_activity_at >= ${p(filter.activeSince)}`);
    if (filter.activeBefore !== undefined)
      where.push(`last_activity_at < ${p(filter.activeBefore)}`);
    if (filter.after) {
      const at = p(filter.after.lastActivityAt);
      const id = p(filter.after.id);
      where.push(
        `(last_activity_at < ${at} OR (last_activity_at = ${at} AND id COLLATE "C" < ${id}))`,
      );
    }
    const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY last_activity_at DESC, id COLLATE "C" DESC LIMIT ${p(filter.limit)}`;
    const { rows } = await this.db.query("browse sessions", sql, params);
    return rows.map(pgSession);
  }

  async sessionsById(ids: readonly string[]): Promise<Session[]> {
    const { rows } = await this.db.query(
      "read sessions by id",
      "SELECT * FROM sessions WHERE id = ANY ($1::text[])",
      [[...ids]],
    );
    return rows.map(pgSession);
  }

  async children(id: string, limit: number): Promise<Session[]> {
    const { rows } = await this.db.query(
      "read child sessions",
      "SELECT * FROM sessions WHERE parent_id = $1 ORDER BY created_at DESC LIMIT $2",
      [id, limit],
    );
    return rows.map(pgSession);
  }

  async transcript(sessionId: string, page: TranscriptPage): Promise<Message[] | null> {
    // $2 is a bigint: the default bound is beyond the INTEGER ordinal column's range.
    const { rows } = await this.db.query(
      "read a transcript page",
      page.includeHistory
        ? `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND ordinal < $2::bigint ORDER BY ordinal DESC LIMIT $3`
        : `SELECT ${COLUMNS} FROM messages WHERE session_id = $1 AND active = 1 AND ordinal < $2::bigint ORDER BY ordinal DESC LIMIT $3`,
      [sessionId, page.before, page.limit],
    );
    if (rows.length === 0) {
      const found = await this.db.query("find a session", "SELECT 1 FROM sessions WHERE id = $1", [
        sessionId,
      ]);
      if (found.rowCount === 0) return null;
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

  async messagesAfter(range: MessageRange): Promise<Message[]> {
    const { afterId, uptoId, limit, sessionIds } = range;
    const { rows } = sessionIds
      ? await this.db.query(
          "read new messages",
          `SELECT ${COLUMNS} FROM messages WHERE id > $1 AND id <= $2
           AND session_id = ANY ($3::text[]) ORDER BY id LIMIT $4`,
          [afterId, uptoId, [...sessionIds], limit],
        )
      : await this.db.query(
          "read new messages",
          `SELECT ${COLUMNS} FROM messages WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`,
          [afterId, uptoId, limit],
        );
    return rows.map(pgMessage);
  }

  async platforms(limit: number): Promise<string[]> {
    const { rows } = await this.db.query(
      "list platforms",
      `SELECT source FROM (SELECT DISTINCT source FROM sessions) s
       ORDER BY source COLLATE "C" LIMIT ${limit}`,
    );
    return rows.map((r) => r.source as string);
  }

  async activity(range: ActivityRange) {
    const run = async (what: string, build: (ph: (v: unknown) => string) => string) => {
      const params: unknown[] = [];
      const sql = build((v) => {
        params.push(v);
        return `$${params.length}`;
      });
      return (await this.db.query(what, sql, params)).rows as Record<string, unknown>[];
    };
    const counts = countsFrom(await run("activity counts", (ph) => countsSql(ph, range)));
    const latencies = latenciesFrom(await run("activity latency", (ph) => latencySql(ph, range)));
    const model = "(m.metadata::json ->> 'model')";
    const usage = usageFrom(await run("activity usage", (ph) => usageSql(ph, range, model)));
    return { counts, latencies, usage };
  }
}

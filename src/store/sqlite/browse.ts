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
import { type MessageRow, type SessionRow, toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import type { Access } from "./access.js";

/** The reads of a browse (../browse.ts) on SQLite, every one on the read-only connection (C1). */
export class SqliteBrowse implements BrowseSql {
  constructor(private readonly access: Access) {}

  async sessions(filter: SessionFilter): Promise<Session[]> {
    const where = [...filter.state];
    const params: unknown[] = [];
    const add = (term: string, ...values: unknown[]) => {
      where.push(term);
      params.push(...values);
    };
    if (filter.source !== undefined) add("source = ?", filter.source);
    // `+?`: a bare pattern parameter would have SQLite prepare the statement
    // again for every pattern (test/.../statement-replan.test.ts).
    if (filter.like)
      add(
        `(title LIKE +? ESCAPE '\\' OR chat_key LIKE +? ESCAPE '\\'
          OR id LIKE +? ESCAPE '\\' OR source LIKE +? ESCAPE '\\')`,
        filter.like.title,
        filter.like.title,
        filter.like.id,
        filter.like.id,
      );
    if (filter.activeSince !== undefined) add("last_activity_at >= ?", filter.activeSince);
    if (filter.activeBefore !== undefined) add("last_activity_at < ?", filter.activeBefore);
    if (filter.after) {
      const { lastActivityAt, id } = filter.after;
      add(
        "(last_activity_at < ? OR (last_activity_at = ? AND id < ?))",
        lastActivityAt,
        lastActivityAt,
        id,
      );
    }
    const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY last_activity_at DESC, id DESC LIMIT +?`;
    const rows = this.access
      .read()
      .stmt(sql)
      .all(...params, filter.limit) as SessionRow[];
    return rows.map(toSession);
  }

  async sessionsById(ids: readonly string[]): Promise<Session[]> {
    const byId = this.access.read().stmt("SELECT * FROM sessions WHERE id = ?");
    return ids.flatMap((id) => {
      const row = byId.get(id) as SessionRow | undefined;
      return row ? [toSession(row)] : [];
    });
  }

  async children(id: string, limit: number): Promise<Session[]> {
    const rows = this.access
      .read()
      .stmt("SELECT * FROM sessions WHERE parent_id = ? ORDER BY created_at DESC LIMIT +?")
      .all(id, limit) as SessionRow[];
    return rows.map(toSession);
  }

  async transcript(sessionId: string, page: TranscriptPage): Promise<Message[] | null> {
    const conn = this.access.read();
    const rows = conn
      .stmt(
        page.includeHistory
          ? "SELECT * FROM messages WHERE session_id = ? AND ordinal < ? ORDER BY ordinal DESC LIMIT +?"
          : "SELECT * FROM messages WHERE session_id = ? AND active = 1 AND ordinal < ? ORDER BY ordinal DESC LIMIT +?",
      )
      .all(sessionId, page.before, page.limit) as MessageRow[];
    if (rows.length === 0 && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
      return null;
    }
    return rows.map(toMessage);
  }

  /**
   * SQLite's `PRAGMA data_version` on the read-only connection: it changes
   * when another connection (another process, or this process's writer)
   * commits. One pragma; no table is read.
   */
  async dataVersion(): Promise<number> {
    return Number(this.access.read().pragma("data_version"));
  }

  async lastMessageId(): Promise<number> {
    const row = this.access.read().stmt("SELECT max(id) AS id FROM messages").get() as {
      id: number | null;
    };
    return row.id ?? 0;
  }

  async messagesAfter(range: MessageRange): Promise<Message[]> {
    const { afterId, uptoId, limit, sessionIds } = range;
    const conn = this.access.read();
    const rows = (
      sessionIds
        ? conn
            .stmt(
              `SELECT * FROM messages WHERE id > ? AND id <= ?
               AND session_id IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT +?`,
            )
            .all(afterId, uptoId, JSON.stringify(sessionIds), limit)
        : conn
            .stmt("SELECT * FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT +?")
            .all(afterId, uptoId, limit)
    ) as MessageRow[];
    return rows.map(toMessage);
  }

  async platforms(limit: number): Promise<string[]> {
    const rows = this.access
      .read()
      .stmt(`SELECT DISTINCT source FROM sessions ORDER BY source LIMIT ${limit}`)
      .all() as { source: string }[];
    return rows.map((r) => r.source);
  }

  async activity(range: ActivityRange) {
    const conn = this.access.read();
    const run = (build: (ph: (v: unknown) => string) => string) => {
      const params: unknown[] = [];
      const sql = build((v) => {
        params.push(v);
        return "?";
      });
      return conn.stmt(sql).all(...params) as Record<string, unknown>[];
    };
    const counts = countsFrom(run((ph) => countsSql(ph, range)));
    const latencies = latenciesFrom(run((ph) => latencySql(ph, range)));
    const model = "json_extract(m.metadata, '$.model')";
    const usage = usageFrom(run((ph) => usageSql(ph, range, model)));
    return { counts, latencies, usage };
  }
}

import { type MessageRow, type SessionRow, toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import type { Access } from "./access.js";
import { sessionNotFound } from "./sessions.js";

/** Which sessions a browse shows: "visible" is neither archived nor hidden. */
export type SessionState = "visible" | "open" | "ended" | "pinned" | "archived" | "hidden" | "all";

export const SESSION_STATES: readonly SessionState[] = [
  "visible",
  "open",
  "ended",
  "pinned",
  "archived",
  "hidden",
  "all",
];

export interface BrowseOptions {
  limit: number;
  /** Only sessions from this platform (source). */
  source?: string;
  state?: SessionState;
  /** Case-insensitive substring of the title, or a prefix of the id. */
  text?: string;
  /** Keyset: only sessions strictly after this (lastActivityAt, id) in newest-first order. */
  after?: { lastActivityAt: number; id: string };
  /** Only sessions active at or after / before these epoch milliseconds. */
  activeSince?: number;
  activeBefore?: number;
}

/**
 * Reads for people browsing a store (the dashboard): filtered keyset pages
 * of sessions, transcript pages newest first, lineage, and the cheap
 * "did anyone write?" probe live views poll. Every read runs on the
 * read-only connection (C1).
 */
export class Browse {
  constructor(private readonly access: Access) {}

  /** Sessions newest activity first; returns up to `limit` rows (the caller asks for one more to know there is a next page). */
  async sessions(options: BrowseOptions): Promise<Session[]> {
    const where: string[] = [];
    const params: unknown[] = [];
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
    if (options.source !== undefined) where.push("source = ?") && params.push(options.source);
    if (options.text !== undefined && options.text !== "") {
      // LIKE with an escape character: the user's text is matched literally.
      // `+?`: a bare pattern parameter would have SQLite prepare the
      // statement again for every pattern (test/.../statement-replan.test.ts).
      const escaped = options.text.replace(/[\\%_]/g, (c) => `\\${c}`);
      where.push("(title LIKE +? ESCAPE '\\' OR id LIKE +? ESCAPE '\\')");
      params.push(`%${escaped}%`, `${escaped}%`);
    }
    if (options.activeSince !== undefined)
      where.push("last_activity_at >= ?") && params.push(options.activeSince);
    if (options.activeBefore !== undefined)
      where.push("last_activity_at < ?") && params.push(options.activeBefore);
    if (options.after) {
      where.push("(last_activity_at < ? OR (last_activity_at = ? AND id < ?))");
      params.push(options.after.lastActivityAt, options.after.lastActivityAt, options.after.id);
    }
    const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY last_activity_at DESC, id DESC LIMIT +?`;
    const rows = this.access
      .read()
      .stmt(sql)
      .all(...params, options.limit) as SessionRow[];
    return rows.map(toSession);
  }

  /** Sessions by id (missing ones left out), for labelling search hits. */
  async sessionsById(ids: readonly string[]): Promise<Session[]> {
    const byId = this.access.read().stmt("SELECT * FROM sessions WHERE id = ?");
    const out: Session[] = [];
    for (const id of new Set(ids)) {
      const row = byId.get(id) as SessionRow | undefined;
      if (row) out.push(toSession(row));
    }
    return out;
  }

  /** The session's children (sessions whose parent it is), newest first. */
  async children(id: string, limit = 50): Promise<Session[]> {
    const rows = this.access
      .read()
      .stmt("SELECT * FROM sessions WHERE parent_id = ? ORDER BY created_at DESC LIMIT +?")
      .all(id, limit) as SessionRow[];
    return rows.map(toSession);
  }

  /**
   * One page of a transcript, newest first: messages with an ordinal below
   * `before` (all when omitted), at most `limit`. Live messages only unless
   * `includeHistory`. A missing session is HEARTH_SESSION_NOT_FOUND.
   */
  async transcript(
    sessionId: string,
    options: { limit: number; before?: number; includeHistory?: boolean },
  ): Promise<Message[]> {
    const conn = this.access.read();
    const before = options.before ?? Number.MAX_SAFE_INTEGER;
    const rows = conn
      .stmt(
        options.includeHistory
          ? "SELECT * FROM messages WHERE session_id = ? AND ordinal < ? ORDER BY ordinal DESC LIMIT +?"
          : "SELECT * FROM messages WHERE session_id = ? AND active = 1 AND ordinal < ? ORDER BY ordinal DESC LIMIT +?",
      )
      .all(sessionId, before, options.limit) as MessageRow[];
    if (rows.length === 0 && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
      throw sessionNotFound(sessionId);
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

  /** The highest message id (0 for none): where a live view starts. */
  async lastMessageId(): Promise<number> {
    const row = this.access.read().stmt("SELECT max(id) AS id FROM messages").get() as {
      id: number | null;
    };
    return row.id ?? 0;
  }

  /**
   * Messages stored after `afterId`, oldest first, at most `limit`; with
   * `uptoId`, none past it; with `sessionIds`, only theirs (the rows of
   * other sessions are skipped by id range, never converted).
   */
  async messagesAfter(
    afterId: number,
    limit: number,
    only: { uptoId?: number; sessionIds?: readonly string[] } = {},
  ): Promise<Message[]> {
    const upto = only.uptoId ?? Number.MAX_SAFE_INTEGER;
    const rows = (
      only.sessionIds
        ? this.access
            .read()
            .stmt(
              `SELECT * FROM messages WHERE id > ? AND id <= ?
               AND session_id IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT +?`,
            )
            .all(afterId, upto, JSON.stringify(only.sessionIds), limit)
        : this.access
            .read()
            .stmt("SELECT * FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT +?")
            .all(afterId, upto, limit)
    ) as MessageRow[];
    return rows.map(toMessage);
  }

  /** Distinct platforms (sources), for filter menus. */
  async platforms(): Promise<string[]> {
    const rows = this.access
      .read()
      .stmt("SELECT DISTINCT source FROM sessions ORDER BY source LIMIT 200")
      .all() as { source: string }[];
    return rows.map((r) => r.source);
  }
}

import type { Access } from "./access.js";
import { sessionNotFound } from "./sessions.js";

/** The most messages one read returns (as messages.load). */
const MAX_LIMIT = 100_000;

/**
 * The JSON contents of a session's last live messages in one read: SQLite
 * joins them into one JSON array text, parsed once. This is the hot read of
 * an SDK session adapter (hearth/openai-agents getItems), about twice as
 * fast as loading whole messages and parsing them one by one.
 */
export class JsonTail {
  constructor(private readonly access: Access) {}

  /**
   * The parsed contents of the last `limit` live messages (every live one
   * when `limit` is undefined), oldest first. Undefined when a message of
   * that window has text content (use messages.load for those).
   */
  async read(sessionId: string, limit?: number): Promise<unknown[] | undefined> {
    if (typeof sessionId !== "string") throw new TypeError("sessionId must be a string");
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) {
      throw new RangeError(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${limit}`);
    }
    const conn = this.access.read();
    const row = conn
      .stmt(
        `SELECT '[' || group_concat(content, ',' ORDER BY ordinal) || ']' AS json,
                count(*) AS n, sum(content_type <> 'json') AS texts
         FROM (SELECT ordinal, content, content_type FROM messages
               WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT ?)`,
      )
      .get(sessionId, limit ?? -1) as { json: string | null; n: number; texts: number | null };
    if (row.n === 0) {
      if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
        throw sessionNotFound(sessionId);
      }
      return [];
    }
    if (row.texts) return undefined;
    return JSON.parse(row.json ?? "[]") as unknown[];
  }
}

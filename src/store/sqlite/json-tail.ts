import type { Access } from "./access.js";
import { sessionNotFound } from "./sessions.js";

/** The most messages one read returns (as messages.load). */
const MAX_LIMIT = 100_000;

/**
 * The JSON contents of a session's last live messages in one read: only
 * the content column, joined into one JSON array text and parsed once.
 * This is the hot read of an SDK session adapter (hearth/openai-agents
 * getItems), several times faster than loading whole messages (every
 * column a JS value) and parsing them one by one.
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
    // Newest first through the (session_id, active, ordinal) index; text rows come back as null.
    const contents = conn
      .stmt(
        `SELECT CASE content_type WHEN 'json' THEN content END FROM messages
         WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT +?`,
      )
      .pluck()
      .all(sessionId, limit ?? -1) as (string | null)[];
    if (contents.length === 0) {
      if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
        throw sessionNotFound(sessionId);
      }
      return [];
    }
    if (contents.includes(null)) return undefined;
    // One parse of the whole window rather than one per message.
    return JSON.parse(`[${contents.reverse().join(",")}]`) as unknown[];
  }
}

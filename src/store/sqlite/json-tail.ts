import type { JsonTailSql } from "../json-tail.js";
import { sessionNotFound } from "../session-create.js";
import type { Access } from "./access.js";

/** The JSON tail (../json-tail.ts) on SQLite: one statement on the reader. */
export class SqliteJsonTail implements JsonTailSql {
  constructor(private readonly access: Access) {}

  async read(sessionId: string, limit: number | undefined): Promise<string | undefined> {
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
      return "[]";
    }
    if (contents.includes(null)) return undefined;
    return `[${contents.reverse().join(",")}]`;
  }
}

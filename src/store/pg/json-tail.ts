import type { JsonTailSql } from "../json-tail.js";
import { sessionNotFound } from "../session-create.js";
import type { PgDb } from "./pool.js";

/**
 * The JSON tail (../json-tail.ts) on PostgreSQL: the server joins the
 * window's content column into one JSON array text (oldest first). A text
 * message in the window makes it undefined.
 */
export class PgJsonTail implements JsonTailSql {
  constructor(private readonly db: PgDb) {}

  async read(sessionId: string, limit: number | undefined): Promise<string | undefined> {
    // Newest first through the (session_id, active, ordinal) index, then joined oldest first.
    // LIMIT NULL is no limit.
    const { rows } = await this.db.query<{ n: string; texts: string; json: string | null }>(
      "read a JSON tail",
      `SELECT count(*) AS n, count(*) FILTER (WHERE content_type <> 'json') AS texts,
              '[' || string_agg(content, ',' ORDER BY ordinal) || ']' AS json
       FROM (SELECT ordinal, content, content_type FROM messages
             WHERE session_id = $1 AND active = 1 ORDER BY ordinal DESC LIMIT $2) w`,
      [sessionId, limit ?? null],
    );
    const row = rows[0];
    if (!row || Number(row.n) === 0) {
      const found = await this.db.query("find a session", "SELECT 1 FROM sessions WHERE id = $1", [
        sessionId,
      ]);
      if (found.rowCount === 0) throw sessionNotFound(sessionId);
      return "[]";
    }
    if (Number(row.texts) > 0) return undefined;
    return row.json as string;
  }
}

import type { ExportPage, ExportSql } from "../export.js";
import { toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import type { PgDb } from "./pool.js";
import { messageRow, sessionRow } from "./rows.js";

/** The rows of an export (../export.ts) on PostgreSQL: sessions in bytewise id order, as on SQLite. */
export class PgExport implements ExportSql {
  constructor(private readonly db: PgDb) {}

  async session(id: string): Promise<Session | undefined> {
    const { rows } = await this.db.query(
      "export a session",
      "SELECT * FROM sessions WHERE id = $1",
      [id],
    );
    return rows[0] ? toSession(sessionRow(rows[0])) : undefined;
  }

  async sessionAfter(afterId: string): Promise<Session | undefined> {
    const { rows } = await this.db.query(
      "export sessions",
      `SELECT * FROM sessions WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT 1`,
      [afterId],
    );
    return rows[0] ? toSession(sessionRow(rows[0])) : undefined;
  }

  async messages(page: ExportPage): Promise<Message[]> {
    const { sessionId, afterOrdinal, limit, includeHistory } = page;
    const { rows } = await this.db.query(
      "export messages",
      `SELECT * FROM messages WHERE session_id = $1 AND ordinal > $2 ${includeHistory ? "" : "AND active = 1"}
       ORDER BY ordinal LIMIT ${limit}`,
      [sessionId, afterOrdinal],
    );
    return rows.map((raw) => toMessage(messageRow(raw)));
  }
}

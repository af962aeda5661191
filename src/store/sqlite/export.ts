import type { ExportPage, ExportSql } from "../export.js";
import { type MessageRow, type SessionRow, toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import type { Access } from "./access.js";

/** The rows of an export (../export.ts) on the read-only connection; a reader thread runs it too. */
export class SqliteExport implements ExportSql {
  constructor(private readonly access: Access) {}

  async session(id: string): Promise<Session | undefined> {
    const row = this.access.read().stmt("SELECT * FROM sessions WHERE id = ?").get(id);
    return row ? toSession(row as SessionRow) : undefined;
  }

  async sessionAfter(afterId: string): Promise<Session | undefined> {
    const row = this.access
      .read()
      .stmt("SELECT * FROM sessions WHERE id > ? ORDER BY id LIMIT 1")
      .get(afterId);
    return row ? toSession(row as SessionRow) : undefined;
  }

  async messages(page: ExportPage): Promise<Message[]> {
    const { sessionId, afterOrdinal, limit, includeHistory } = page;
    const rows = this.access
      .read()
      .stmt(
        `SELECT * FROM messages WHERE session_id = ? AND ordinal > ? ${includeHistory ? "" : "AND active = 1"}
         ORDER BY ordinal LIMIT ${limit}`,
      )
      .all(sessionId, afterOrdinal) as MessageRow[];
    return rows.map(toMessage);
  }
}

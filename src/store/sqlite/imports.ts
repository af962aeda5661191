import {
  IMPORT_SESSION_COLUMNS,
  type ImportMessageRow,
  type ImportSessionRow,
  type ImportsSql,
  type ImportWriteResult,
  importResult,
  importSessionValues,
} from "../imports.js";
import { messageTokens, messageValues } from "../message-write.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import { withTitle } from "./session-create.js";

/** Imports (../imports.ts) on SQLite: one IMMEDIATE transaction per write(). */
export class SqliteImports implements ImportsSql {
  constructor(private readonly access: Access) {}

  write(
    session: ImportSessionRow,
    messages: readonly ImportMessageRow[],
  ): Promise<ImportWriteResult> {
    return this.access.writeTransaction((conn) => {
      const created = insertSessionIfAbsent(conn, this.access.profile, session);
      const result = importResult(created);
      const existing = conn.stmt(
        "SELECT id, active FROM messages WHERE session_id = ? AND client_id = ?",
      );
      const restate = conn.stmt("UPDATE messages SET active = ?, archived_reason = ? WHERE id = ?");
      const insert = conn.stmt(
        `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
           tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata, active, archived_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const { next_ordinal: first } = conn
        .stmt("SELECT next_ordinal FROM sessions WHERE id = ?")
        .get(session.id) as { next_ordinal: number };
      // A session this transaction created holds none of them: no probe per message.
      const seen = created !== undefined ? new Set<string>() : undefined;
      let next = first;
      let live = 0;
      let tokens = 0;
      let lastAt = 0;
      for (const { message: m, active, archivedReason } of messages) {
        const clientId = m.clientId!;
        if (seen?.has(clientId)) {
          result.skipped++;
          continue;
        }
        const stored = seen
          ? undefined
          : (existing.get(session.id, clientId) as { id: number; active: number } | undefined);
        if (stored) {
          result.skipped++;
          if ((stored.active === 1) !== active) {
            restate.run(active ? 1 : 0, archivedReason, stored.id);
            live += active ? 1 : -1;
            result.restated++;
          }
          continue;
        }
        seen?.add(clientId);
        insert.run(session.id, next++, ...messageValues(m), active ? 1 : 0, archivedReason);
        if (active) live++;
        tokens += messageTokens(m);
        lastAt = Math.max(lastAt, m.createdAt);
        result.inserted++;
      }
      // The session's counters once per batch, as each append would have left them.
      if (next !== first || live !== 0)
        conn
          .stmt(
            `UPDATE sessions SET next_ordinal = ?, message_count = message_count + ?,
               token_count = token_count + ?, last_activity_at = max(last_activity_at, ?),
               updated_at = max(updated_at, ?)
             WHERE id = ?`,
          )
          .run(next, live, tokens, lastAt, lastAt, session.id);
      return result;
    });
  }
}

/** Create the session row when its id is free: the stored title, or undefined when it existed. */
function insertSessionIfAbsent(
  conn: Connection,
  profile: string,
  s: ImportSessionRow,
): string | null | undefined {
  if (conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(s.id)) return undefined;
  const parentId =
    s.parentId !== null && conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(s.parentId)
      ? s.parentId
      : null;
  const insert = conn.stmt(
    `INSERT INTO sessions (${IMPORT_SESSION_COLUMNS})
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let stored: string | null = null;
  withTitle(s.title, true, (title) => {
    stored = title;
    return insert.run(...importSessionValues(s, profile, title, parentId));
  });
  return stored;
}

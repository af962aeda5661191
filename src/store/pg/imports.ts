import {
  IMPORT_SESSION_COLUMNS,
  type ImportMessageRow,
  type ImportSessionRow,
  type ImportsSql,
  type ImportWriteResult,
  importResult,
  importSessionValues,
} from "../imports.js";
import type { PreparedMessage } from "../message-input.js";
import { messageTokens, messageValues } from "../message-write.js";
import type { PgClient, PgDb } from "./pool.js";
import { num, refuseNul, refuseNulMessage } from "./rows.js";
import { SESSION_ID_LOCK, withTitle } from "./session-create.js";
import { write } from "./write.js";

/** Imports (../imports.ts) on PostgreSQL: one transaction per write(), the session row locked. */
export class PgImports implements ImportsSql {
  constructor(private readonly db: PgDb) {}

  refuse(m: PreparedMessage): void {
    refuseNulMessage(m);
  }

  write(
    session: ImportSessionRow,
    messages: readonly ImportMessageRow[],
  ): Promise<ImportWriteResult> {
    for (const field of ["id", "title", "ownerId", "source", "chatKey", "parentId"] as const)
      refuseNul(session[field], field);
    refuseNul(session.endReason, "endReason");
    refuseNul(session.metadata, "metadata");
    return write(this.db, "import a session", undefined, async (client) => {
      const created = await insertSessionIfAbsent(client, this.db.profile, session);
      await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [session.id]);
      const result = importResult(created);
      const ids = messages.map((r) => r.message.clientId);
      const { rows } = await client.query(
        "SELECT id, active, client_id FROM messages WHERE session_id = $1 AND client_id = ANY($2::text[])",
        [session.id, ids],
      );
      const stored = new Map<string, { id: number; active: number }>();
      for (const r of rows)
        stored.set(r.client_id as string, { id: num(r.id), active: num(r.active) });
      let liveDelta = 0;
      for (const { message: m, active, archivedReason } of messages) {
        const known = stored.get(m.clientId!);
        if (known) {
          result.skipped++;
          if ((known.active === 1) !== active) {
            await client.query(
              "UPDATE messages SET active = $1, archived_reason = $2 WHERE id = $3",
              [active ? 1 : 0, archivedReason, known.id],
            );
            liveDelta += active ? 1 : -1;
            result.restated++;
          }
          continue;
        }
        await client.query(INSERT_SQL, [
          session.id,
          ...messageValues(m),
          messageTokens(m),
          active ? 1 : 0,
          archivedReason,
        ]);
        // A clientId given twice in one batch is stored once, as on SQLite.
        stored.set(m.clientId!, { id: 0, active: active ? 1 : 0 });
        result.inserted++;
      }
      if (liveDelta !== 0)
        await client.query("UPDATE sessions SET message_count = message_count + $1 WHERE id = $2", [
          liveDelta,
          session.id,
        ]);
      return result;
    });
  }
}

/** The append of pg/message-write.ts, with the archived state given (parameters 14 and 15). */
const INSERT_SQL = `WITH slot AS (
       UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + $14::integer,
         token_count = token_count + $13::bigint,
         last_activity_at = greatest(last_activity_at, $10::bigint),
         updated_at = greatest(updated_at, $10::bigint)
       WHERE id = $1 RETURNING next_ordinal - 1 AS ordinal)
     INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
       tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata, active, archived_reason)
     SELECT $1::text, slot.ordinal, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
       $8::integer, $9::integer, $10::bigint, $11::text, $12::text, $14::integer, $15::text
     FROM slot`;

/** Create the session row when its id is free: the stored title, or undefined when it existed. */
async function insertSessionIfAbsent(
  client: PgClient,
  profile: string,
  s: ImportSessionRow,
): Promise<string | null | undefined> {
  // Two importers of one id meet here: the second waits for the first's commit.
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SESSION_ID_LOCK, s.id]);
  const existing = await client.query("SELECT 1 FROM sessions WHERE id = $1", [s.id]);
  if ((existing.rowCount ?? 0) > 0) return undefined;
  let parentId = s.parentId;
  if (parentId !== null) {
    const parent = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR SHARE", [parentId]);
    if (parent.rowCount === 0) parentId = null;
  }
  let stored: string | null = null;
  await withTitle(client, s.title, true, (title) => {
    stored = title;
    return client.query(
      `INSERT INTO sessions (${IMPORT_SESSION_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      importSessionValues(s, profile, title, parentId),
    );
  });
  return stored;
}

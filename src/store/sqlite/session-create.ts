/**
 * Creating a session on SQLite: the checks and the insert in one write
 * transaction (../session-create.ts has the rules and the refusals). A
 * title is taken when the unique index on sessions.title says so.
 */
import { type SessionRow, toSession } from "../rows.js";
import {
  adoptExisting,
  type CreateOptions,
  type SessionInsert,
  sessionNotFound,
  TitleTries,
  titleTaken,
  unknownParent,
} from "../session-create.js";
import type { Session } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

/** Insert `row` (SessionsSql.insert): a taken id and an unknown parent are checked in the same transaction. */
export async function insertSession(
  access: Access,
  row: SessionInsert,
  options: CreateOptions & { getOrCreate?: boolean },
): Promise<Session> {
  if (options.getOrCreate) {
    // The common case, a session that exists, is one read and no write transaction.
    const known = access.read().stmt("SELECT * FROM sessions WHERE id = ?").get(row.id);
    if (known) return toSession(known as SessionRow);
  }
  const now = access.now();
  return access.writeTransaction((conn) => {
    const existing = conn.stmt("SELECT * FROM sessions WHERE id = ?").get(row.id);
    if (existing) return adoptExisting(toSession(existing as SessionRow), options.getOrCreate);
    const parentId = row.parentId;
    if (parentId !== null && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(parentId)) {
      throw unknownParent(parentId);
    }
    const insert = conn.stmt(
      `INSERT INTO sessions (id, profile, source, chat_key, title, title_source, created_at,
         updated_at, last_activity_at, parent_id, owner_id, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    withTitle(row.title, row.titleSource === "auto", (title) =>
      insert.run(
        row.id,
        access.profile,
        row.source,
        row.chatKey,
        title,
        row.titleSource,
        now,
        now,
        now,
        parentId,
        row.ownerId,
        row.metadata,
      ),
    );
    return requireOn(conn, row.id);
  }, options.signal);
}

/** Run `statement` with `title`, then each next candidate of TitleTries while the title is taken. */
export function withTitle(
  title: string | null,
  suffix: boolean,
  statement: (candidate: string | null) => unknown,
): void {
  const tries = new TitleTries(title, suffix);
  for (;;) {
    try {
      statement(tries.candidate);
      return;
    } catch (err) {
      tries.refused(err, isTitleConflict(err));
    }
  }
}

/** HEARTH_TITLE_TAKEN for `title` when `err` is the title index's refusal, else undefined. */
export function titleError(err: unknown, title: string | null) {
  return isTitleConflict(err) ? titleTaken(title, err) : undefined;
}

function isTitleConflict(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  const message = (err as Error).message ?? "";
  return code === "SQLITE_CONSTRAINT_UNIQUE" && message.includes("sessions.title");
}

export function requireOn(conn: Connection, id: string): Session {
  const row = conn.stmt("SELECT * FROM sessions WHERE id = ?").get(id);
  if (!row) throw sessionNotFound(id);
  return toSession(row as SessionRow);
}

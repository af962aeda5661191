/**
 * Creating a session on PostgreSQL: the checks and the insert in one
 * transaction (../session-create.ts has the rules and the refusals). A
 * title is taken when the unique index sessions_visible_title says so
 * (23505).
 */
import { toSession } from "../rows.js";
import {
  adoptExisting,
  type CreateOptions,
  type SessionInsert,
  sessionNotFound,
  TitleTries,
  unknownParent,
} from "../session-create.js";
import type { Session } from "../types.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul, sessionRow } from "./rows.js";
import { write } from "./write.js";

/** Insert `row` (SessionsSql.insert): a taken id and an unknown parent are checked in the same transaction. */
export async function insertSession(
  db: PgDb,
  row: SessionInsert,
  options: CreateOptions & { getOrCreate?: boolean },
): Promise<Session> {
  for (const field of ["id", "title", "ownerId", "source", "chatKey", "parentId"] as const)
    refuseNul(row[field], field);
  if (options.getOrCreate) {
    const known = await db.query("read a session", "SELECT * FROM sessions WHERE id = $1", [
      row.id,
    ]);
    if (known.rows[0]) return toSession(sessionRow(known.rows[0]));
  }
  const now = Date.now();
  return write(db, "create a session", options.signal, async (client) => {
    // Two creators of one id meet here: the second waits for the first's commit.
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SESSION_ID_LOCK, row.id]);
    const existing = await client.query("SELECT * FROM sessions WHERE id = $1", [row.id]);
    if (existing.rows[0]) {
      return adoptExisting(toSession(sessionRow(existing.rows[0])), options.getOrCreate);
    }
    if (row.parentId !== null) {
      const parent = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR SHARE", [
        row.parentId,
      ]);
      if (parent.rowCount === 0) throw unknownParent(row.parentId);
    }
    await withTitle(client, row.title, row.titleSource === "auto", (title) =>
      client.query(
        `INSERT INTO sessions (id, profile, source, chat_key, title, title_source, created_at,
           updated_at, last_activity_at, parent_id, owner_id, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7, $8, $9, $10)`,
        [
          row.id,
          db.profile,
          row.source,
          row.chatKey,
          title,
          row.titleSource,
          now,
          row.parentId,
          row.ownerId,
          row.metadata,
        ],
      ),
    );
    return requireOn(client, row.id);
  });
}

/** The advisory lock class of session ids being created ('sess'). */
export const SESSION_ID_LOCK = 0x73657373;

/**
 * Run `statement` with `title`, then each next candidate of TitleTries
 * while the title is taken. Each try runs in a savepoint: a failed
 * statement would otherwise end the transaction.
 */
export async function withTitle(
  client: PgClient,
  title: string | null,
  suffix: boolean,
  statement: (candidate: string | null) => Promise<unknown>,
): Promise<void> {
  const tries = new TitleTries(title, suffix);
  for (;;) {
    await client.query("SAVEPOINT hearth_title");
    try {
      await statement(tries.candidate);
      await client.query("RELEASE SAVEPOINT hearth_title");
      return;
    } catch (err) {
      await client.query("ROLLBACK TO SAVEPOINT hearth_title");
      await client.query("RELEASE SAVEPOINT hearth_title");
      tries.refused(err, isTitleTaken(err));
    }
  }
}

/** PostgreSQL's refusal of a title another visible session holds (the unique index sessions_visible_title). */
export function isTitleTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | undefined;
  return e?.code === "23505" && e.constraint === "sessions_visible_title";
}

/** HEARTH_SESSION_NOT_FOUND for an id holding NUL: no stored id can (PostgreSQL text cannot hold it). */
export function refuseNulId(id: string): void {
  if (typeof id === "string" && id.includes("\u0000")) throw sessionNotFound(id);
}

export async function requireOn(client: PgClient | PgDb, id: string): Promise<Session> {
  refuseNulId(id);
  const { rows } =
    "transaction" in client
      ? await client.query("read a session", "SELECT * FROM sessions WHERE id = $1", [id])
      : await client.query("SELECT * FROM sessions WHERE id = $1", [id]);
  if (!rows[0]) throw sessionNotFound(id);
  return toSession(sessionRow(rows[0]));
}

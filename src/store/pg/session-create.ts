/**
 * Creating a session on PostgreSQL (mirrors ../session-create.ts): the
 * checks and the insert in one transaction; a taken id, an unknown parent
 * and a taken title are refused with the same codes as on SQLite. A title
 * is taken when the unique index sessions_visible_title says so (23505).
 */
import { randomUUID } from "node:crypto";
import { HearthError } from "../../errors.js";
import { checkOwnerId, serializeMetadata } from "../metadata.js";
import { toSession } from "../rows.js";
import { type CreateOptions, normalizeTitle, sessionNotFound } from "../sqlite/session-create.js";
import type { NewSession, Session } from "../types.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul, sessionRow } from "./rows.js";
import { write } from "./write.js";

export async function createSession(
  db: PgDb,
  input: NewSession,
  options: CreateOptions & { getOrCreate?: boolean } = {},
): Promise<Session> {
  if (input === null || typeof input !== "object") throw new TypeError("input must be an object");
  const id = input.id ?? randomUUID();
  if (typeof id !== "string" || id === "" || id.length > 200) {
    throw new TypeError("id must be a non-empty string of at most 200 characters");
  }
  const title = normalizeTitle(input.title);
  const titleSource = title === null ? null : (input.titleSource ?? "user");
  const ownerId = checkOwnerId(input.ownerId, "ownerId");
  const metadata = serializeMetadata(input.metadata, "metadata");
  const parentId = input.parentId ?? null;
  if (parentId !== null && typeof parentId !== "string") {
    throw new TypeError("parentId must be a string or null");
  }
  for (const [value, field] of [
    [id, "id"],
    [title, "title"],
    [ownerId, "ownerId"],
    [input.source, "source"],
    [input.chatKey, "chatKey"],
    [parentId, "parentId"],
  ] as const)
    refuseNul(value, field);
  if (options.getOrCreate) {
    const known = await db.query("read a session", "SELECT * FROM sessions WHERE id = $1", [id]);
    if (known.rows[0]) return toSession(sessionRow(known.rows[0]));
  }
  const now = Date.now();
  return write(db, "create a session", options.signal, async (client) => {
    // Two creators of one id meet here: the second waits for the first's commit.
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SESSION_ID_LOCK, id]);
    const existing = await client.query("SELECT * FROM sessions WHERE id = $1", [id]);
    if (existing.rows[0]) {
      if (options.getOrCreate) return toSession(sessionRow(existing.rows[0]));
      throw new HearthError(
        "HEARTH_SESSION_EXISTS",
        `a session with id ${JSON.stringify(id)} already exists`,
        {
          resource: id,
          hint: "use sessions.getOrCreate() to adopt it, or omit the id to get a fresh one",
        },
      );
    }
    if (parentId !== null) {
      const parent = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR SHARE", [
        parentId,
      ]);
      if (parent.rowCount === 0)
        throw new HearthError(
          "HEARTH_UNKNOWN_PARENT",
          `parentId ${JSON.stringify(parentId)} names no session`,
          { resource: parentId, hint: "create the parent first, or pass parentId: null" },
        );
    }
    await withTitle(client, title, titleSource === "auto", (candidate) =>
      client.query(
        `INSERT INTO sessions (id, profile, source, chat_key, title, title_source, created_at,
           updated_at, last_activity_at, parent_id, owner_id, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7, $8, $9, $10)`,
        [
          id,
          db.profile,
          input.source ?? "cli",
          input.chatKey ?? null,
          candidate,
          titleSource,
          now,
          parentId,
          ownerId,
          metadata,
        ],
      ),
    );
    return requireOn(client, id);
  });
}

/** The advisory lock class of session ids being created ('sess'). */
const SESSION_ID_LOCK = 0x73657373;

/**
 * Run `statement` with `title`; a title taken by another visible session is
 * HEARTH_TITLE_TAKEN, or with `suffix` the next free " (n)". Each try runs
 * in a savepoint: a failed statement would otherwise end the transaction.
 */
export async function withTitle(
  client: PgClient,
  title: string | null,
  suffix: boolean,
  statement: (candidate: string | null) => Promise<unknown>,
): Promise<void> {
  let candidate = title;
  for (let n = 2; ; n++) {
    await client.query("SAVEPOINT hearth_title");
    try {
      await statement(candidate);
      await client.query("RELEASE SAVEPOINT hearth_title");
      return;
    } catch (err) {
      await client.query("ROLLBACK TO SAVEPOINT hearth_title");
      await client.query("RELEASE SAVEPOINT hearth_title");
      const taken = titleError(err, candidate);
      if (!taken || !suffix || n > 1000) throw taken ?? err;
      candidate = `${title} (${n})`;
    }
  }
}

export function titleError(err: unknown, title: string | null): HearthError | undefined {
  const e = err as { code?: unknown; constraint?: unknown };
  if (e.code !== "23505" || e.constraint !== "sessions_visible_title") return undefined;
  return new HearthError(
    "HEARTH_TITLE_TAKEN",
    `another visible session is already titled ${JSON.stringify(title)}`,
    {
      resource: title ?? "",
      hint: "choose another title, or archive the other session",
      cause: err,
    },
  );
}

export async function requireOn(client: PgClient | PgDb, id: string): Promise<Session> {
  if (typeof id === "string" && id.includes("\u0000")) throw sessionNotFound(id);
  const { rows } =
    "transaction" in client
      ? await client.query("read a session", "SELECT * FROM sessions WHERE id = $1", [id])
      : await client.query("SELECT * FROM sessions WHERE id = $1", [id]);
  if (!rows[0]) throw sessionNotFound(id);
  return toSession(sessionRow(rows[0]));
}

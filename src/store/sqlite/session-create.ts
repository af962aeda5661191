import { nodeCrypto } from "../../builtins.js";
import { HearthError } from "../../errors.js";
import { checkOwnerId, serializeMetadata } from "../metadata.js";
import { type SessionRow, toSession } from "../rows.js";
import type { NewSession, Session } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

/** Options of calls that can wait for the write lock. */
export interface CreateOptions {
  /** Abort the wait for the write lock: HEARTH_ABORTED, nothing written. */
  signal?: AbortSignal;
}

/**
 * Create a session. A taken id is HEARTH_SESSION_EXISTS (or, with
 * `getOrCreate`, the stored session is returned as it is), a parentId that
 * names no session is HEARTH_UNKNOWN_PARENT; both are checked in the same
 * transaction as the insert, so a concurrent creator cannot slip between.
 */
export async function createSession(
  access: Access,
  input: NewSession,
  options: CreateOptions & { getOrCreate?: boolean } = {},
): Promise<Session> {
  if (input === null || typeof input !== "object") throw new TypeError("input must be an object");
  const id = input.id ?? nodeCrypto().randomUUID();
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
  if (options.getOrCreate) {
    // The common case, a session that exists, is one read and no write transaction.
    const known = access.read().stmt("SELECT * FROM sessions WHERE id = ?").get(id);
    if (known) return toSession(known as SessionRow);
  }
  const now = access.now();
  return access.writeTransaction((conn) => {
    const existing = conn.stmt("SELECT * FROM sessions WHERE id = ?").get(id) as
      | SessionRow
      | undefined;
    if (existing) {
      if (options.getOrCreate) return toSession(existing);
      throw new HearthError(
        "HEARTH_SESSION_EXISTS",
        `a session with id ${JSON.stringify(id)} already exists`,
        {
          resource: id,
          hint: "use sessions.getOrCreate() to adopt it, or omit the id to get a fresh one",
        },
      );
    }
    if (parentId !== null && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(parentId)) {
      throw new HearthError(
        "HEARTH_UNKNOWN_PARENT",
        `parentId ${JSON.stringify(parentId)} names no session`,
        {
          resource: parentId,
          hint: "create the parent first, or pass parentId: null",
        },
      );
    }
    // Like rename(): a taken user title is an error, a taken automatic one gets a suffix.
    let candidate = title;
    for (let n = 2; ; n++) {
      try {
        conn
          .stmt(
            `INSERT INTO sessions (id, profile, source, chat_key, title, title_source, created_at,
               updated_at, last_activity_at, parent_id, owner_id, metadata)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            id,
            access.profile,
            input.source ?? "cli",
            input.chatKey ?? null,
            candidate,
            titleSource,
            now,
            now,
            now,
            parentId,
            ownerId,
            metadata,
          );
        break;
      } catch (err) {
        const taken = titleError(err, candidate);
        if (!taken || titleSource !== "auto" || n > 1000) throw taken ?? err;
        candidate = `${title} (${n})`;
      }
    }
    return requireOn(conn, id);
  }, options.signal);
}

export function requireOn(conn: Connection, id: string): Session {
  const row = conn.stmt("SELECT * FROM sessions WHERE id = ?").get(id);
  if (!row) throw sessionNotFound(id);
  return toSession(row as SessionRow);
}

export function sessionNotFound(id: string): HearthError {
  return new HearthError("HEARTH_SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}`, {
    resource: id,
    hint: "hearth sessions list   # shows the ids",
  });
}

export function normalizeTitle(title: string | null | undefined): string | null {
  if (title === null || title === undefined) return null;
  if (typeof title !== "string") throw new TypeError("title must be a string or null");
  const trimmed = title.trim().replace(/\s+/g, " ");
  if (trimmed.length > 200) throw new RangeError("title must be at most 200 characters");
  return trimmed === "" ? null : trimmed;
}

export function titleError(err: unknown, title: string | null): HearthError | undefined {
  const code = (err as { code?: string }).code;
  const message = (err as Error).message ?? "";
  if (code !== "SQLITE_CONSTRAINT_UNIQUE" || !message.includes("sessions.title")) return undefined;
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

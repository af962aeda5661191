/**
 * Sessions on PostgreSQL: the SessionsSql of ../sessions.ts (which checks
 * the arguments and holds the rules) as statements on a PgDb. Session ids
 * compare and sort bytewise (COLLATE "C"), as SQLite's do, so list cursors
 * mean the same on both backends.
 */
import { randomUUID } from "node:crypto";
import { HearthError } from "../../errors.js";
import { type AuditRow, withTargets } from "../audit.js";
import { type JsonObject, mergeMetadata, parseMetadata } from "../metadata.js";
import type { LineageRow, SessionFingerprint } from "../prune.js";
import { toSession } from "../rows.js";
import {
  type CreateOptions,
  type SessionInsert,
  sessionNotFound,
  TitleTries,
  titleStays,
} from "../session-create.js";
import type { SessionFlag, SessionsSql } from "../sessions.js";
import type { SqlParams } from "../sql.js";
import type { Session, TitleSource } from "../types.js";
import { insertAudit } from "./audit.js";
import { lockSession } from "./message-write.js";
import type { PgDb, PreparedSql } from "./pool.js";
import { deleteIfUnchanged, deleteLineage, endIdle, fingerprint, lineageRows } from "./prune.js";
import { refuseNul, SESSION_ROW_COLUMNS, sessionRow } from "./rows.js";
import {
  insertSession,
  isTitleTaken,
  refuseNulId,
  requireOn,
  withTitle,
} from "./session-create.js";

/** Reads and merges a rename with metadata tries before HEARTH_BUSY (each retry means another writer's change landed). */
const RENAME_ATTEMPTS = 20;

/**
 * `write` with each title candidate in turn (TitleTries): the next one when
 * the server refused the last as taken, its result once one was not.
 */
async function eachTitle<T>(
  title: string | null,
  suffix: boolean,
  write: (candidate: string | null) => Promise<T>,
): Promise<T> {
  const tries = new TitleTries(title, suffix);
  for (;;) {
    try {
      return await write(tries.candidate);
    } catch (err) {
      // PgDb.statement codes the error; the server's refusal is its cause.
      const raw = (err as { cause?: unknown }).cause;
      const taken = isTitleTaken(raw);
      tries.refused(taken ? raw : err, taken);
    }
  }
}

export class PgSessions implements SessionsSql {
  readonly paramStyle = "$" as const;
  readonly idKey = 'id COLLATE "C"';

  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  async get(id: string): Promise<Session | null> {
    // No stored id holds NUL (PostgreSQL text cannot), and the server would refuse the parameter.
    if (typeof id === "string" && id.includes("\u0000")) return null;
    const { rows } = await this.db.query("read a session", "SELECT * FROM sessions WHERE id = $1", [
      id,
    ]);
    return rows[0] ? toSession(sessionRow(rows[0])) : null;
  }

  require(id: string): Promise<Session> {
    return requireOn(this.db, id);
  }

  insert(row: SessionInsert, options: CreateOptions & { getOrCreate?: boolean }) {
    return insertSession(this.db, row, options);
  }

  async resolveChat(platform: string, chatKey: string): Promise<Session> {
    refuseNul(platform, "platform");
    refuseNul(chatKey, "chat");
    const known = await this.db.query("resolve a chat", FIND_CHAT, [platform, chatKey]);
    if (known.rows[0]) return toSession(sessionRow(known.rows[0]));
    return this.db.transaction("resolve a chat", async (client) => {
      // Concurrent first messages of one chat, on any host, meet at this lock.
      await client.query({
        ...CHAT_LOCK_SQL,
        values: [CHAT_LOCK, `${platform}\u0001${chatKey}`],
      });
      // The INSERT is a statement of its own after the lock: its snapshot
      // holds a session that another resolve of this chat committed while
      // this one waited, and then it inserts nothing. A new chat's row comes
      // back from the INSERT: one round trip, not a read, an insert and a read.
      const { rows } = await client.query({
        ...CREATE_CHAT,
        values: [randomUUID(), this.db.profile, platform, chatKey, Date.now()],
      });
      const row = rows[0] ?? (await client.query(FIND_CHAT.text, [platform, chatKey])).rows[0];
      return toSession(sessionRow(row));
    });
  }

  async list(select: string, params: SqlParams, limit: number): Promise<Session[]> {
    const text = `${select} LIMIT ${params.add(limit)}`;
    const { rows } = await this.db.query("list sessions", text, params.values);
    return rows.map((r) => toSession(sessionRow(r)));
  }

  /**
   * One UPDATE in its own implicit transaction (1 round trip, 8 in a
   * transaction of lock, read, savepoint, update, read): its WHERE keeps a
   * user's title from an automatic one (titleStays) on the row's latest
   * version, under the row lock the UPDATE takes. A taken title fails that
   * statement alone, and the next candidate is tried.
   */
  async rename(
    id: string,
    title: string | null,
    source: TitleSource,
    metadata?: JsonObject,
  ): Promise<Session> {
    refuseNul(title, "title");
    refuseNulId(id);
    if (metadata) return this.renameMerging(id, title, source, metadata);
    return eachTitle(title, source === "auto", async (candidate) => {
      const { rows } = await this.db.statement(
        "rename a session",
        RENAME,
        titleParams(id, candidate, source),
      );
      // No row: the session is unknown (refused), or a user's title stays (returned as it is).
      return rows[0] ? toSession(sessionRow(rows[0])) : await requireOn(this.db, id);
    });
  }

  /**
   * rename() with `patch` merged into the metadata: the metadata is read,
   * merged, and written by an UPDATE that also requires it unchanged (the
   * stored text, compared whole). Another writer's change in between makes
   * that UPDATE match no row, and the read and merge run again on its
   * value: 2 round trips, never a stale copy written over a newer one.
   */
  private async renameMerging(
    id: string,
    title: string | null,
    source: TitleSource,
    patch: JsonObject,
  ): Promise<Session> {
    for (let attempt = 1; ; attempt++) {
      const { rows: read } = await this.db.query("read a session's metadata", RENAME_READ, [id]);
      const now = read[0] as
        | { title_source: Session["titleSource"]; metadata: string | null }
        | undefined;
      if (!now) throw sessionNotFound(id);
      if (titleStays({ titleSource: now.title_source }, source)) return requireOn(this.db, id);
      const merged = mergeMetadata(parseMetadata(now.metadata), patch);
      const renamed = await eachTitle(title, source === "auto", async (candidate) => {
        const { rows } = await this.db.statement("rename a session", RENAME_MERGING, [
          ...titleParams(id, candidate, source),
          merged,
          now.metadata,
        ]);
        return rows[0] ? toSession(sessionRow(rows[0])) : undefined;
      });
      // No row: changed since the read (or gone, or a user's title came): read again.
      if (renamed) return renamed;
      if (attempt >= RENAME_ATTEMPTS) {
        throw new HearthError(
          "HEARTH_BUSY",
          `session ${id}'s metadata changed ${attempt} times while it was being renamed; nothing was changed`,
          { resource: id, hint: "retry the rename" },
        );
      }
    }
  }

  setFlag(id: string, column: SessionFlag, value: boolean, audit?: AuditRow): Promise<Session> {
    return this.db.transaction(`set ${column}`, async (client) => {
      await lockSession(client, id);
      const current = await requireOn(client, id);
      // Unarchiving or unhiding makes the title visible again: it may be taken.
      await withTitle(client, current.title, false, () =>
        client.query(`UPDATE sessions SET ${column} = $1, updated_at = $2 WHERE id = $3`, [
          value ? 1 : 0,
          Date.now(),
          id,
        ]),
      );
      if (audit) await insertAudit(client, audit);
      return requireOn(client, id);
    });
  }

  update(id: string, column: "metadata" | "owner_id", value: string | null): Promise<Session> {
    // Metadata is JSON, which escapes NUL; an owner id is raw text.
    refuseNul(value, column === "owner_id" ? "ownerId" : column);
    return this.change(id, `set ${column}`, (now) => [
      `UPDATE sessions SET ${column} = $1, updated_at = $2 WHERE id = $3`,
      [value, now, id],
    ]);
  }

  end(id: string, reason: string): Promise<Session> {
    refuseNul(reason, "reason");
    return this.change(id, "end a session", (now) => [
      "UPDATE sessions SET ended_at = $1, end_reason = $2, updated_at = $1 WHERE id = $3",
      [now, reason, id],
    ]);
  }

  resume(id: string): Promise<Session> {
    return this.change(id, "resume a session", (now) => [
      "UPDATE sessions SET ended_at = NULL, end_reason = NULL, updated_at = $1, last_activity_at = $1 WHERE id = $2",
      [now, id],
    ]);
  }

  delete(id: string, audit: AuditRow): Promise<boolean> {
    return this.db.transaction("delete a session", async (client) => {
      const { rowCount } = await client.query("DELETE FROM sessions WHERE id = $1", [id]);
      if (rowCount !== 1) return false;
      await insertAudit(client, audit);
      return true;
    });
  }

  async deleteEmpty(cutoff: number, dryRun: boolean, audit: AuditRow): Promise<string[]> {
    const select = `SELECT id FROM sessions s
      WHERE pinned = 0 AND last_activity_at <= $1
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)`;
    if (dryRun) {
      const { rows } = await this.db.query("find empty sessions", select, [cutoff]);
      return rows.map((r) => r.id as string);
    }
    return this.db.transaction("delete empty sessions", async (client) => {
      const { rows } = await client.query(
        `DELETE FROM sessions s WHERE s.id IN (${select} FOR UPDATE SKIP LOCKED)
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
         RETURNING s.id`,
        [cutoff],
      );
      const ids = rows.map((r) => r.id as string);
      if (ids.length > 0) await insertAudit(client, withTargets(audit, ids));
      return ids;
    });
  }

  lineageRows(): Promise<LineageRow[]> {
    return lineageRows(this.db);
  }

  deleteLineage(ids: string[], qualifies: (r: LineageRow) => boolean, audit: AuditRow) {
    return deleteLineage(this.db, ids, qualifies, audit);
  }

  endIdle(cutoff: number): Promise<string[]> {
    return endIdle(this.db, cutoff);
  }

  fingerprint(id: string): Promise<SessionFingerprint | undefined> {
    return fingerprint(this.db, id);
  }

  deleteIfUnchanged(expected: SessionFingerprint, audit: AuditRow): Promise<boolean> {
    return deleteIfUnchanged(this.db, expected, audit);
  }

  /**
   * One UPDATE ... RETURNING in its own implicit transaction: it takes the
   * row's lock, and no row means no session (1 round trip; 5 as a
   * transaction of lock, update and read).
   */
  private async change(id: string, doing: string, statement: (now: number) => [string, unknown[]]) {
    refuseNulId(id);
    const [text, params] = statement(Date.now());
    const { rows } = await this.db.statement(doing, `${text} RETURNING *`, params);
    if (!rows[0]) throw sessionNotFound(id);
    return toSession(sessionRow(rows[0]));
  }
}

/** The advisory lock class of chats being resolved ('chat'). */
const CHAT_LOCK = 0x63686174;

/** A chat's live session: the read of every gateway turn, prepared (PreparedSql). */
/*
 * Prepared (PreparedSql): a gateway runs these for every new chat (its
 * session, then its automatic title), parsed and planned once per
 * connection instead of at every call (workload 18: 0.0065 ms of planning
 * per message, most of the gateway's).
 */
const CHAT_LOCK_SQL: PreparedSql = {
  name: "hearth_chat_lock",
  text: "SELECT pg_advisory_xact_lock($1, hashtext($2))",
};

const CREATE_CHAT: PreparedSql = {
  name: "hearth_chat_create",
  text: `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $5::bigint, $5::bigint
    WHERE NOT EXISTS (
      SELECT 1 FROM sessions WHERE source = $3::text AND chat_key = $4::text AND ended_at IS NULL)
    RETURNING ${SESSION_ROW_COLUMNS.join(", ")}`,
};

/** $1 to $5 of RENAME and RENAME_MERGING: the title, its source, the time, the id, whether the title is automatic. */
function titleParams(id: string, title: string | null, source: TitleSource): unknown[] {
  return [title, title === null ? null : source, Date.now(), id, source === "auto"];
}

const RENAME: PreparedSql = {
  name: "hearth_rename",
  text: `UPDATE sessions SET title = $1, title_source = $2, updated_at = $3
    WHERE id = $4 AND NOT ($5::boolean AND title_source IS NOT DISTINCT FROM 'user')
    RETURNING ${SESSION_ROW_COLUMNS.join(", ")}`,
};

const RENAME_READ: PreparedSql = {
  name: "hearth_rename_read",
  text: "SELECT title_source, metadata FROM sessions WHERE id = $1",
};

const RENAME_MERGING: PreparedSql = {
  name: "hearth_rename_merging",
  text: `UPDATE sessions SET title = $1, title_source = $2, updated_at = $3, metadata = $6
    WHERE id = $4 AND NOT ($5::boolean AND title_source IS NOT DISTINCT FROM 'user')
      AND metadata IS NOT DISTINCT FROM $7
    RETURNING ${SESSION_ROW_COLUMNS.join(", ")}`,
};

const FIND_CHAT: PreparedSql = {
  name: "hearth_find_chat",
  text: `SELECT ${SESSION_ROW_COLUMNS.join(", ")} FROM sessions
    WHERE source = $1 AND chat_key = $2 AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1`,
};

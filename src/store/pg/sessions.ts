/**
 * Sessions on PostgreSQL: the SessionsSql of ../sessions.ts (which checks
 * the arguments and holds the rules) as statements on a PgDb. Session ids
 * compare and sort bytewise (COLLATE "C"), as SQLite's do, so list cursors
 * mean the same on both backends.
 */
import { randomUUID } from "node:crypto";
import { type AuditRow, withTargets } from "../audit.js";
import type { LineageRow, SessionFingerprint } from "../prune.js";
import { toSession } from "../rows.js";
import { type CreateOptions, type SessionInsert, titleStays } from "../session-create.js";
import type { SessionFlag, SessionsSql } from "../sessions.js";
import type { SqlParams } from "../sql.js";
import type { Session, TitleSource } from "../types.js";
import { insertAudit } from "./audit.js";
import { lockSession } from "./message-write.js";
import type { PgDb } from "./pool.js";
import { deleteIfUnchanged, deleteLineage, endIdle, fingerprint, lineageRows } from "./prune.js";
import { refuseNul, sessionRow } from "./rows.js";
import { insertSession, requireOn, withTitle } from "./session-create.js";

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
    const find =
      "SELECT * FROM sessions WHERE source = $1 AND chat_key = $2 AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1";
    const known = await this.db.query("resolve a chat", find, [platform, chatKey]);
    if (known.rows[0]) return toSession(sessionRow(known.rows[0]));
    return this.db.transaction("resolve a chat", async (client) => {
      // Concurrent first messages of one chat, on any host, meet at this lock.
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
        CHAT_LOCK,
        `${platform}\u0001${chatKey}`,
      ]);
      const open = await client.query(find, [platform, chatKey]);
      if (open.rows[0]) return toSession(sessionRow(open.rows[0]));
      const fresh = randomUUID();
      const now = Date.now();
      await client.query(
        `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
         VALUES ($1, $2, $3, $4, $5, $5, $5)`,
        [fresh, this.db.profile, platform, chatKey, now],
      );
      return requireOn(client, fresh);
    });
  }

  async list(select: string, params: SqlParams, limit: number): Promise<Session[]> {
    const text = `${select} LIMIT ${params.add(limit)}`;
    const { rows } = await this.db.query("list sessions", text, params.values);
    return rows.map((r) => toSession(sessionRow(r)));
  }

  async rename(id: string, title: string | null, source: TitleSource): Promise<Session> {
    refuseNul(title, "title");
    return this.db.transaction("rename a session", async (client) => {
      await lockSession(client, id);
      const current = await requireOn(client, id);
      if (titleStays(current, source)) return current;
      await withTitle(client, title, source === "auto", (candidate) =>
        client.query(
          "UPDATE sessions SET title = $1, title_source = $2, updated_at = $3 WHERE id = $4",
          [candidate, candidate === null ? null : source, Date.now(), id],
        ),
      );
      return requireOn(client, id);
    });
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

  private change(id: string, doing: string, statement: (now: number) => [string, unknown[]]) {
    return this.db.transaction(doing, async (client) => {
      await lockSession(client, id);
      const [text, params] = statement(Date.now());
      await client.query(text, params);
      return requireOn(client, id);
    });
  }
}

/** The advisory lock class of chats being resolved ('chat'). */
const CHAT_LOCK = 0x63686174;

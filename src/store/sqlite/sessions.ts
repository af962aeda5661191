/**
 * Sessions on SQLite: the SessionsSql of ../sessions.ts (which checks the
 * arguments and holds the rules) as statements on the store's reader and
 * writer connections, each write one synchronous transaction callback.
 */
import { nodeCrypto } from "../../builtins.js";
import { type AuditRow, withTargets } from "../audit.js";
import { type JsonObject, mergeMetadata } from "../metadata.js";
import type { LineageRow, SessionFingerprint } from "../prune.js";
import { type SessionRow, toSession } from "../rows.js";
import { type CreateOptions, type SessionInsert, titleStays } from "../session-create.js";
import type { SessionFlag, SessionsSql } from "../sessions.js";
import type { SqlParams } from "../sql.js";
import type { Session, TitleSource } from "../types.js";
import type { Access } from "./access.js";
import { insertAudit } from "./audit.js";
import type { Connection } from "./connection.js";
import { FIND_OPEN_CHAT } from "./open-chat.js";
import { deleteIfUnchanged, deleteLineage, endIdle, fingerprint, lineageRows } from "./prune.js";
import { insertSession, requireOn, titleError, withTitle } from "./session-create.js";

export class SqliteSessions implements SessionsSql {
  readonly paramStyle = "?" as const;
  readonly idKey = "id";

  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  async get(id: string): Promise<Session | null> {
    const row = this.access.read().stmt("SELECT * FROM sessions WHERE id = ?").get(id);
    return row ? toSession(row as SessionRow) : null;
  }

  async require(id: string): Promise<Session> {
    return requireOn(this.access.read(), id);
  }

  insert(row: SessionInsert, options: CreateOptions & { getOrCreate?: boolean }) {
    return insertSession(this.access, row, options);
  }

  async resolveChat(platform: string, chatKey: string): Promise<Session> {
    const find = FIND_OPEN_CHAT;
    // The common case, an open session, is one read and no write transaction.
    const known = this.access.read().stmt(find).get(platform, chatKey) as SessionRow | undefined;
    if (known) return toSession(known);
    const id = await this.access.writeTransaction((conn) => {
      const open = conn.stmt(find).get(platform, chatKey) as { id: string } | undefined;
      if (open) return open.id;
      const fresh = nodeCrypto().randomUUID();
      const now = this.access.now();
      conn
        .stmt(
          `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(fresh, this.access.profile, platform, chatKey, now, now, now);
      return fresh;
    });
    return requireOn(this.access.write(), id);
  }

  async list(select: string, params: SqlParams, limit: number): Promise<Session[]> {
    const rows = this.access
      .read()
      .stmt(`${select} LIMIT +?`)
      .all(...params.values, limit) as SessionRow[];
    return rows.map(toSession);
  }

  async rename(
    id: string,
    title: string | null,
    source: TitleSource,
    metadata?: JsonObject,
  ): Promise<Session> {
    await this.access.writeTransaction((conn) => {
      const current = requireOn(conn, id);
      if (titleStays(current, source)) return;
      // Merged under the write lock, from the metadata as it is now.
      const merged = metadata && mergeMetadata(current.metadata, metadata);
      const update = conn.stmt(
        `UPDATE sessions SET title = ?, title_source = ?, updated_at = ?${merged ? ", metadata = ?" : ""} WHERE id = ?`,
      );
      withTitle(title, source === "auto", (candidate) =>
        update.run(
          candidate,
          candidate === null ? null : source,
          this.access.now(),
          ...(merged ? [merged] : []),
          id,
        ),
      );
    });
    return requireOn(this.access.write(), id);
  }

  async setFlag(id: string, column: SessionFlag, value: boolean, audit?: AuditRow) {
    await this.access.writeTransaction((conn) => {
      requireOn(conn, id);
      try {
        conn
          .stmt(`UPDATE sessions SET ${column} = ?, updated_at = ? WHERE id = ?`)
          .run(value ? 1 : 0, this.access.now(), id);
      } catch (err) {
        // Unarchiving or unhiding makes the title visible again: it may be taken.
        throw titleError(err, requireOn(conn, id).title) ?? err;
      }
      if (audit) insertAudit(conn, audit);
    });
    return requireOn(this.access.write(), id);
  }

  async update(id: string, column: "metadata" | "owner_id", value: string | null) {
    return this.change(id, (conn, now) =>
      conn
        .stmt(`UPDATE sessions SET ${column} = ?, updated_at = ? WHERE id = ?`)
        .run(value, now, id),
    );
  }

  async end(id: string, reason: string): Promise<Session> {
    return this.change(id, (conn, now) =>
      conn
        .stmt("UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? WHERE id = ?")
        .run(now, reason, now, id),
    );
  }

  async resume(id: string): Promise<Session> {
    return this.change(id, (conn, now) =>
      conn
        .stmt(
          "UPDATE sessions SET ended_at = NULL, end_reason = NULL, updated_at = ?, last_activity_at = ? WHERE id = ?",
        )
        .run(now, now, id),
    );
  }

  async delete(id: string, audit: AuditRow): Promise<boolean> {
    return this.access.writeTransaction((conn) => {
      if (conn.stmt("DELETE FROM sessions WHERE id = ?").run(id).changes !== 1) return false;
      insertAudit(conn, audit);
      return true;
    });
  }

  async deleteEmpty(cutoff: number, dryRun: boolean, audit: AuditRow): Promise<string[]> {
    const select = `SELECT id FROM sessions s
      WHERE pinned = 0 AND last_activity_at <= ?
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)`;
    if (dryRun) {
      return (this.access.read().stmt(select).all(cutoff) as { id: string }[]).map((r) => r.id);
    }
    return this.access.writeTransaction((conn) => {
      const ids = (conn.stmt(select).all(cutoff) as { id: string }[]).map((r) => r.id);
      const del = conn.stmt(
        "DELETE FROM sessions WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)",
      );
      const deleted = ids.filter((id) => del.run(id, id).changes === 1);
      if (deleted.length > 0) insertAudit(conn, withTargets(audit, deleted));
      return deleted;
    });
  }

  async lineageRows(dryRun: boolean): Promise<LineageRow[]> {
    return lineageRows(this.access, dryRun);
  }

  deleteLineage(ids: string[], qualifies: (r: LineageRow) => boolean, audit: AuditRow) {
    return deleteLineage(this.access, ids, qualifies, audit);
  }

  endIdle(cutoff: number): Promise<string[]> {
    return endIdle(this.access, cutoff);
  }

  async fingerprint(id: string): Promise<SessionFingerprint | undefined> {
    return fingerprint(this.access, id);
  }

  deleteIfUnchanged(expected: SessionFingerprint, audit: AuditRow): Promise<boolean> {
    return deleteIfUnchanged(this.access, expected, audit);
  }

  /** Run `statement` on an existing session in one write transaction; the session after it. */
  private async change(id: string, statement: (conn: Connection, now: number) => unknown) {
    await this.access.writeTransaction((conn) => {
      requireOn(conn, id);
      statement(conn, this.access.now());
    });
    return requireOn(this.access.write(), id);
  }
}

/**
 * Sessions on PostgreSQL (mirrors ../sessions.ts): the same methods, results,
 * ordering and refusals. Session ids compare and sort bytewise (COLLATE
 * "C"), as SQLite's do, so list cursors mean the same on both backends.
 */

import { randomUUID } from "node:crypto";
import { requireString } from "../args.js";
import { checkOwnerId, type JsonObject, serializeMetadata } from "../metadata.js";
import type { Public } from "../public.js";
import { toSession } from "../rows.js";
import type { PruneOptions, PruneResult, SessionFingerprint } from "../sqlite/prune.js";
import { type CreateOptions, normalizeTitle } from "../sqlite/session-create.js";
import type { Sessions } from "../sqlite/sessions.js";
import { decodeCursor, encodeCursor } from "../sqlite/sessions.js";
import type { ListSessionsOptions, NewSession, Page, Session, TitleSource } from "../types.js";
import { lockSession } from "./message-write.js";
import type { PgDb } from "./pool.js";
import { deleteIfUnchanged, endIdleSessions, fingerprint, pruneSessions } from "./prune.js";
import { refuseNul, sessionRow } from "./rows.js";
import { createSession, requireOn, withTitle } from "./session-create.js";

const MAX_PAGE = 500;

export class PgSessions implements Public<Sessions> {
  constructor(private readonly db: PgDb) {}

  async create(input: NewSession = {}, options: CreateOptions = {}): Promise<Session> {
    return createSession(this.db, input, options);
  }

  async getOrCreate(
    id: string,
    input: Omit<NewSession, "id"> = {},
    options: CreateOptions = {},
  ): Promise<Session> {
    requireString(id, "id");
    return createSession(this.db, { ...input, id }, { ...options, getOrCreate: true });
  }

  async setMetadata(id: string, metadata: JsonObject | null): Promise<Session> {
    requireString(id, "id");
    return this.update(id, "metadata", serializeMetadata(metadata, "metadata"));
  }

  async setOwner(id: string, ownerId: string | null): Promise<Session> {
    requireString(id, "id");
    const owner = checkOwnerId(ownerId, "ownerId");
    refuseNul(owner, "ownerId");
    return this.update(id, "owner_id", owner);
  }

  /** The open session of a chat, created in the same transaction when there is none. */
  async resolveChat(platform: string, chatKey: string): Promise<Session> {
    if (
      typeof platform !== "string" ||
      platform === "" ||
      typeof chatKey !== "string" ||
      chatKey === ""
    ) {
      throw new TypeError("platform and chat must be non-empty strings");
    }
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

  async get(id: string): Promise<Session | null> {
    requireString(id, "id");
    // No stored id holds NUL (PostgreSQL text cannot), and the server would refuse the parameter.
    if (typeof id === "string" && id.includes("\u0000")) return null;
    const { rows } = await this.db.query("read a session", "SELECT * FROM sessions WHERE id = $1", [
      id,
    ]);
    return rows[0] ? toSession(sessionRow(rows[0])) : null;
  }

  async require(id: string): Promise<Session> {
    requireString(id, "id");
    return requireOn(this.db, id);
  }

  async list(options: ListSessionsOptions = {}): Promise<Page<Session>> {
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new RangeError(`options.limit must be an integer from 1 to ${MAX_PAGE}, got ${limit}`);
    }
    const column = options.sort === "created" ? "created_at" : "last_activity_at";
    if (options.sort !== undefined && options.sort !== "created" && options.sort !== "activity") {
      throw new RangeError(
        `options.sort must be "activity" or "created", got ${String(options.sort)}`,
      );
    }
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (!options.includeArchived) where.push("archived = 0");
    if (!options.includeHidden) where.push("hidden = 0");
    if (options.source !== undefined) where.push(`source = ${p(options.source)}`);
    if (options.chatKey !== undefined) where.push(`chat_key = ${p(options.chatKey)}`);
    if (options.ended !== undefined)
      where.push(options.ended ? "ended_at IS NOT NULL" : "ended_at IS NULL");
    if (options.pinned !== undefined) where.push(`pinned = ${p(options.pinned ? 1 : 0)}`);
    if (options.ownerId !== undefined)
      where.push(`owner_id = ${p(checkOwnerId(options.ownerId, "options.ownerId"))}`);
    if (options.cursor) {
      const [value, id] = decodeCursor(options.cursor);
      const v = p(value);
      where.push(`(${column} < ${v} OR (${column} = ${v} AND id COLLATE "C" < ${p(id)}))`);
    }
    const { rows } = await this.db.query(
      "list sessions",
      `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY ${column} DESC, id COLLATE "C" DESC LIMIT ${p(limit + 1)}`,
      params,
    );
    const items = rows.slice(0, limit).map((r) => toSession(sessionRow(r)));
    const last = rows.length > limit ? sessionRow(rows[limit - 1]!) : undefined;
    return { items, nextCursor: last ? encodeCursor(last[column], last.id) : null };
  }

  async rename(id: string, title: string | null, source: TitleSource = "user"): Promise<Session> {
    requireString(id, "id");
    const normalized = normalizeTitle(title);
    refuseNul(normalized, "title");
    return this.db.transaction("rename a session", async (client) => {
      await lockSession(client, id);
      const current = await requireOn(client, id);
      if (source === "auto" && current.titleSource === "user") return current;
      await withTitle(client, normalized, source === "auto", (candidate) =>
        client.query(
          "UPDATE sessions SET title = $1, title_source = $2, updated_at = $3 WHERE id = $4",
          [candidate, candidate === null ? null : source, Date.now(), id],
        ),
      );
      return requireOn(client, id);
    });
  }

  async setPinned(id: string, pinned: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "pinned", pinned);
  }

  async setArchived(id: string, archived: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "archived", archived);
  }

  async setHidden(id: string, hidden: boolean): Promise<Session> {
    requireString(id, "id");
    return this.setFlag(id, "hidden", hidden);
  }

  async end(id: string, reason: string): Promise<Session> {
    requireString(id, "id");
    refuseNul(reason, "reason");
    return this.change(id, "end a session", (now) => [
      "UPDATE sessions SET ended_at = $1, end_reason = $2, updated_at = $1 WHERE id = $3",
      [now, reason, id],
    ]);
  }

  async resume(id: string): Promise<Session> {
    requireString(id, "id");
    return this.change(id, "resume a session", (now) => [
      "UPDATE sessions SET ended_at = NULL, end_reason = NULL, updated_at = $1, last_activity_at = $1 WHERE id = $2",
      [now, id],
    ]);
  }

  async delete(id: string): Promise<boolean> {
    requireString(id, "id");
    return this.db.transaction("delete a session", async (client) => {
      const { rowCount } = await client.query("DELETE FROM sessions WHERE id = $1", [id]);
      return rowCount === 1;
    });
  }

  /** Delete sessions with no message rows at all (history counts as rows); pinned ones are kept. */
  async deleteEmpty(options: { olderThanMs?: number; dryRun?: boolean } = {}): Promise<string[]> {
    const cutoff = Date.now() - (options.olderThanMs ?? 0);
    const select = `SELECT id FROM sessions s
      WHERE pinned = 0 AND last_activity_at <= $1
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)`;
    if (options.dryRun) {
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
      return rows.map((r) => r.id as string);
    });
  }

  prune(options: PruneOptions): Promise<PruneResult> {
    return pruneSessions(this.db, options);
  }

  endIdle(idleMs: number): Promise<string[]> {
    return endIdleSessions(this.db, idleMs);
  }

  async fingerprint(id: string): Promise<SessionFingerprint | undefined> {
    requireString(id, "id");
    return fingerprint(this.db, id);
  }

  deleteIfUnchanged(expected: SessionFingerprint): Promise<boolean> {
    return deleteIfUnchanged(this.db, expected);
  }

  private setFlag(id: string, column: "pinned" | "archived" | "hidden", value: boolean) {
    return this.db.transaction(`set ${column}`, async (client) => {
      await lockSession(client, id);
      const current = await requireOn(client, id);
      await withTitle(client, current.title, false, () =>
        client.query(`UPDATE sessions SET ${column} = $1, updated_at = $2 WHERE id = $3`, [
          value ? 1 : 0,
          Date.now(),
          id,
        ]),
      );
      return requireOn(client, id);
    });
  }

  private update(id: string, column: "metadata" | "owner_id", value: string | null) {
    return this.change(id, `set ${column}`, (now) => [
      `UPDATE sessions SET ${column} = $1, updated_at = $2 WHERE id = $3`,
      [value, now, id],
    ]);
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

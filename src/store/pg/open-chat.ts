/**
 * AppendItem.openChat on PostgreSQL: an item is stored only while its
 * session is still its chat's open one (the newest session of the chat not
 * ended, as resolveChat answers), checked in the item's own transaction.
 *
 * The check reads after the session's row is locked (FOR UPDATE), in a
 * statement of its own, so its snapshot holds every end or delete of the
 * session committed before the lock was granted, and none can commit
 * until this transaction does (both need the row). A newer session that
 * another process creates for the chat meanwhile touches no row this
 * transaction holds: the two are ordered as if the append ran first, as
 * on SQLite, whose writes are serial.
 */
import type { OpenChat } from "../messages.js";
import { chatMoved } from "../open-chat.js";
import type { PgClient } from "./pool.js";

/** The chat's open session, as resolveChat finds it: its newest not ended, on sessions_by_chat ($1 source, $2 chat key). */
export const OPEN_CHAT_ID = `SELECT id FROM sessions
  WHERE source = $1 AND chat_key = $2 AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1`;

/**
 * In a transaction: lock `sessionId`'s row, then require it to be the open
 * session of `chat`, else HEARTH_CHAT_MOVED (also for a session deleted
 * since: the chat's next turn opens a new one). The item path of a group
 * commit (PgMessages.appendMany); the grouped attempt checks every item in
 * one statement (OPEN_CHATS_MOVED).
 */
export async function requireOpenChat(
  client: PgClient,
  chat: OpenChat,
  sessionId: string,
): Promise<void> {
  const locked = await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [sessionId]);
  if (locked.rowCount === 0) throw chatMoved(sessionId);
  const { rows } = await client.query(OPEN_CHAT_ID, [chat.platform, chat.chatKey]);
  if (rows[0]?.id !== sessionId) throw chatMoved(sessionId);
}

/**
 * A part of the grouped attempt's read under its locks (group-append.ts,
 * READ_LOCKED): the session ids, of the items with an openChat, that are
 * no longer their chat's open session. $4, $5, $6: each such item's
 * session id, platform and chat key.
 */
export const OPEN_CHATS_MOVED = `SELECT NULL, NULL, NULL, c.session_id
  FROM unnest($4::text[], $5::text[], $6::text[]) AS c(session_id, source, chat_key)
  WHERE c.session_id IS DISTINCT FROM (
    SELECT s.id FROM sessions s
    WHERE s.source = c.source AND s.chat_key = c.chat_key AND s.ended_at IS NULL
    ORDER BY s.created_at DESC LIMIT 1)`;

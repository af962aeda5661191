import type { OpenChat } from "../messages.js";
import { chatMoved } from "../open-chat.js";
import type { Connection } from "./connection.js";

/** A chat's open session: the newest one of its platform and chat key not ended (sessions_by_chat). */
export const FIND_OPEN_CHAT =
  "SELECT * FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1";

const OPEN_CHAT_ID =
  "SELECT id FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1";

/**
 * Inside a write transaction: `sessionId` is still the open session of
 * `chat` (what resolveChat would answer now), else HEARTH_CHAT_MOVED: the
 * session was ended, deleted or replaced by a newer one for the chat, by
 * this process or another, since the caller resolved it.
 */
export function requireOpenChat(conn: Connection, chat: OpenChat, sessionId: string): void {
  const open = conn.stmt(OPEN_CHAT_ID).get(chat.platform, chat.chatKey) as
    | { id: string }
    | undefined;
  if (open?.id !== sessionId) throw chatMoved(sessionId);
}

import type { Session } from "../store/types.js";

/**
 * What a turn needs of a chat's remembered session: its id (the append's
 * openChat check proves it is still the chat's open one), and the message
 * count and title that decide compaction and the first exchange's title.
 * Never the whole Session: its metadata alone may be 16 KiB, and a gateway
 * remembers up to `max` chats for each profile it serves (issue 44).
 */
export type RememberedSession = Pick<Session, "id" | "title" | "messageCount">;

/**
 * The open session of each chat this process ran a turn on, as that turn's
 * reply commit left it: the next turn on the chat skips the lookup
 * (sessions.resolveChat, a statement and a read transaction on the
 * read-only connection; ~9 % of a gateway turn's CPU, docs/benchmarks.md).
 *
 * Never trusted alone: another process may end, delete or replace the
 * chat's session at any moment (the dashboard, `hearth sessions …`, prune,
 * an import). A turn on a remembered session appends with
 * AppendItem.openChat, which checks in the append's own transaction that
 * the session is still the chat's open one; when it is not, nothing is
 * written (HEARTH_CHAT_MOVED), the entry is forgotten and the turn looks
 * the chat up again (runTurn).
 *
 * Bounded: past `max` chats the least recently used is forgotten. Each
 * entry is a RememberedSession copied out of the session the turn's commit
 * read (three fields, ~100 bytes with its key), not that object.
 */
export class ChatSessions {
  private readonly chats = new Map<string, RememberedSession>();

  constructor(private readonly max = 1024) {}

  get(platform: string, chat: string): RememberedSession | undefined {
    const key = chatKey(platform, chat);
    const session = this.chats.get(key);
    if (session) {
      // Most recently used last (Map keeps insertion order).
      this.chats.delete(key);
      this.chats.set(key, session);
    }
    return session;
  }

  set(platform: string, chat: string, session: RememberedSession): void {
    const key = chatKey(platform, chat);
    this.chats.delete(key);
    // A copy of the three fields: the caller's Session (metadata, handoff, …) is not kept alive.
    const { id, title, messageCount } = session;
    this.chats.set(key, { id, title, messageCount });
    if (this.chats.size > this.max) {
      const oldest = this.chats.keys().next().value;
      if (oldest !== undefined) this.chats.delete(oldest);
    }
  }

  forget(platform: string, chat: string): void {
    this.chats.delete(chatKey(platform, chat));
  }

  get size(): number {
    return this.chats.size;
  }
}

/** Unambiguous for any strings (a separator could occur in a platform or chat). */
const chatKey = (platform: string, chat: string) => `${platform.length}:${platform}${chat}`;

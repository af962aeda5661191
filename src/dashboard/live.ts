import type { ServerResponse } from "node:http";
import type { Message, Session } from "../store/types.js";
import type { ProfileStores } from "./profiles.js";

/** What a live client receives (Server-Sent Events, one JSON `data:` each). */
export type LiveEvent =
  | { event: "messages"; data: { profile: string; messages: Message[] } }
  | { event: "sessions"; data: { profile: string; sessions: Session[] } }
  | { event: "change"; data: { profile: string } };

/** At most this many new messages are read per profile per poll; the rest come next poll. */
const MAX_PER_POLL = 2000;

interface Cursor {
  version: number;
  lastId: number;
}

/** What one browser shows: a session's messages arrive only to the streams that watch it. */
export interface Watch {
  profile: string;
  sessionId: string;
}

/** A stream: what it watches, and the profiles its login may see (it hears of no other). */
interface Client {
  watch: Watch | null;
  profiles: readonly string[];
}

/**
 * One poller for the whole process, however many browsers watch. Every
 * `pollMs` it asks each profile's read-only connection for `PRAGMA
 * data_version` (changes when any other connection committed; no table is
 * read). When it changed, every stream gets a `change` (the lists reload
 * their page); the messages stored since the last poll are read only for
 * the sessions some stream watches (`/api/events?watch=profile/id`), and
 * each stream gets its own session's messages and session row. A dashboard
 * left open on the sessions list beside a busy gateway reads no message
 * content at all.
 */
export class LiveFeed {
  private readonly clients = new Map<ServerResponse, Client>();
  private readonly cursors = new Map<string, Cursor>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly stores: ProfileStores,
    private readonly pollMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(): Promise<void> {
    for (const profile of this.stores.profiles) {
      const browse = this.stores.reader(profile).browse;
      this.cursors.set(profile, {
        version: await browse.dataVersion(),
        lastId: await browse.lastMessageId(),
      });
    }
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.heartbeat = setInterval(() => {
      for (const c of this.clients.keys()) c.write(": keep-alive\n\n");
    }, 15_000);
  }

  get listeners(): number {
    return this.clients.size;
  }

  /**
   * Attach a response as an event stream, for a login that sees `profiles`
   * (every served one by default); it is detached when the browser goes away.
   */
  attach(
    raw: ServerResponse,
    headers: Record<string, string>,
    watch: Watch | null = null,
    profiles: readonly string[] = this.stores.profiles,
  ): void {
    raw.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    raw.write(`retry: 2000\nevent: ready\ndata: ${JSON.stringify({ profiles, watch })}\n\n`);
    this.clients.set(raw, { watch, profiles });
    raw.on("close", () => this.clients.delete(raw));
  }

  /** One poll now (tests and the timer). Overlapping polls are skipped. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      try {
        // The files of the profiles some stream hears of: nobody's, none (an fstat per file each).
        const heard = new Set<string>();
        for (const { profiles } of this.clients.values()) for (const p of profiles) heard.add(p);
        await this.stores.reattachChanged([...heard]);
      } catch (err) {
        this.onError(err);
      }
      for (const [profile, cursor] of this.cursors) {
        try {
          await this.pollProfile(profile, cursor);
        } catch (err) {
          this.onError(err);
        }
      }
    } finally {
      this.polling = false;
    }
  }

  private async pollProfile(profile: string, cursor: Cursor): Promise<void> {
    const browse = this.stores.reader(profile).browse;
    const version = await browse.dataVersion();
    if (version === cursor.version) return;
    cursor.version = version;
    const watched = new Set<string>();
    for (const { watch: w } of this.clients.values())
      if (w?.profile === profile) watched.add(w.sessionId);
    const top = await browse.lastMessageId();
    if (watched.size > 0 && top > cursor.lastId) {
      const fresh = await browse.messagesAfter(cursor.lastId, MAX_PER_POLL, {
        uptoId: top,
        sessionIds: [...watched],
      });
      // More than one poll's worth: the rest next poll, from the last one read.
      const full = fresh.length >= MAX_PER_POLL;
      cursor.lastId = full ? fresh[fresh.length - 1]!.id : top;
      if (full) cursor.version = -1;
      if (fresh.length > 0) await this.deliver(profile, fresh);
    } else {
      cursor.lastId = top;
    }
    this.broadcast(profile, { event: "change", data: { profile } });
  }

  /** Each watching stream gets its own session's new messages and its session row. */
  private async deliver(profile: string, fresh: Message[]): Promise<void> {
    const bySession = new Map<string, Message[]>();
    for (const m of fresh) {
      const list = bySession.get(m.sessionId);
      if (list) list.push(m);
      else bySession.set(m.sessionId, [m]);
    }
    const sessions = await this.stores.reader(profile).browse.sessionsById([...bySession.keys()]);
    const frames = new Map<string, string>();
    for (const [id, messages] of bySession) {
      const session = sessions.filter((s) => s.id === id);
      frames.set(
        id,
        frame({ event: "messages", data: { profile, messages } }) +
          frame({ event: "sessions", data: { profile, sessions: session } }),
      );
    }
    for (const [client, { watch }] of this.clients) {
      if (watch?.profile !== profile) continue;
      const text = frames.get(watch.sessionId);
      if (text) client.write(text);
    }
  }

  /** To every stream whose login sees `profile`. */
  private broadcast(profile: string, e: LiveEvent): void {
    const text = frame(e);
    for (const [c, { profiles }] of this.clients) if (profiles.includes(profile)) c.write(text);
  }

  /** Stop polling and end every stream (drain). */
  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    for (const c of this.clients.keys()) c.end();
    this.clients.clear();
  }
}

function frame(e: LiveEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

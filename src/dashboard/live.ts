import type { ServerResponse } from "node:http";
import type { Message, Session } from "../store/types.js";
import type { ProfileStores } from "./profiles.js";

/** What a live client receives (Server-Sent Events, one JSON `data:` each). */
export type LiveEvent =
  | { event: "messages"; data: { profile: string; messages: Message[] } }
  | { event: "sessions"; data: { profile: string; sessions: Session[] } }
  | { event: "change"; data: { profile: string } };

const BATCH = 500;
/** At most this many new messages are read per profile per poll; the rest come next poll. */
const MAX_PER_POLL = 2000;

interface Cursor {
  version: number;
  lastId: number;
}

/**
 * One poller for the whole process, however many browsers watch. Every
 * `pollMs` it asks each profile's read-only connection for `PRAGMA
 * data_version` (changes when any other connection committed; no table is
 * read). Only when it changed, and only when someone listens, does it read
 * the messages stored after the last id it saw (primary-key range) and the
 * sessions they belong to, and send them to every client.
 */
export class LiveFeed {
  private readonly clients = new Set<ServerResponse>();
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
      for (const c of this.clients) c.write(": keep-alive\n\n");
    }, 15_000);
  }

  get listeners(): number {
    return this.clients.size;
  }

  /** Attach a response as an event stream; it is detached when the browser goes away. */
  attach(raw: ServerResponse, headers: Record<string, string>): void {
    raw.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    raw.write(
      `retry: 2000\nevent: ready\ndata: ${JSON.stringify({ profiles: this.stores.profiles })}\n\n`,
    );
    this.clients.add(raw);
    raw.on("close", () => this.clients.delete(raw));
  }

  /** One poll now (tests and the timer). Overlapping polls are skipped. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
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
    if (this.clients.size === 0) {
      cursor.lastId = await browse.lastMessageId();
      return;
    }
    const fresh: Message[] = [];
    while (fresh.length < MAX_PER_POLL) {
      const page = await browse.messagesAfter(cursor.lastId, BATCH);
      if (page.length === 0) break;
      fresh.push(...page);
      cursor.lastId = page[page.length - 1]!.id;
      if (page.length < BATCH) break;
    }
    if (fresh.length > 0) {
      this.send({ event: "messages", data: { profile, messages: fresh } });
      const sessions = await browse.sessionsById(fresh.map((m) => m.sessionId));
      this.send({ event: "sessions", data: { profile, sessions } });
    }
    if (fresh.length >= MAX_PER_POLL) cursor.version = -1; // read the rest next poll
    this.send({ event: "change", data: { profile } });
  }

  private send(e: LiveEvent): void {
    const frame = `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
    for (const c of this.clients) c.write(frame);
  }

  /** Stop polling and end every stream (drain). */
  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.end();
    this.clients.clear();
  }
}

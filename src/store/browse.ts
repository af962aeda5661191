/**
 * Reads for people browsing a store (the dashboard), the part every
 * backend shares: which sessions a state shows, the literal text match,
 * defaults and bounds, the order of sessions looked up by id, and the
 * missing-session rule of transcript pages. A backend runs the reads
 * (BrowseSql: sqlite/browse.ts, pg/browse.ts).
 */
import {
  type ActivityBucket,
  type ActivityCounts,
  type ActivityLatency,
  type ActivityRange,
  type ActivityUsage,
  toBuckets,
} from "./activity.js";
import { sessionNotFound } from "./session-create.js";
import type { Message, Session } from "./types.js";

/** Which sessions a browse shows: "visible" is neither archived nor hidden. */
export type SessionState = "visible" | "open" | "ended" | "pinned" | "archived" | "hidden" | "all";

/** Each state's conditions on the sessions table (the same SQL on every engine). */
const STATE_WHERE: Readonly<Record<SessionState, readonly string[]>> = {
  visible: ["archived = 0", "hidden = 0"],
  open: ["archived = 0", "hidden = 0", "ended_at IS NULL"],
  ended: ["archived = 0", "hidden = 0", "ended_at IS NOT NULL"],
  pinned: ["pinned = 1", "hidden = 0"],
  archived: ["archived = 1"],
  hidden: ["hidden = 1"],
  all: [],
};

export const SESSION_STATES = Object.keys(STATE_WHERE) as readonly SessionState[];

/** The most children one call lists by default. */
const CHILDREN_PAGE = 50;

/** The most platforms (sources) a filter menu lists. */
const MAX_PLATFORMS = 200;

export interface BrowseOptions {
  limit: number;
  /** Only sessions from this platform (source). */
  source?: string;
  state?: SessionState;
  /** Case-insensitive substring of the title or chat key, or a prefix of the id or platform. */
  text?: string;
  /** Keyset: only sessions strictly after this (lastActivityAt, id) in newest-first order. */
  after?: { lastActivityAt: number; id: string };
  /** Only sessions active at or after / before these epoch milliseconds. */
  activeSince?: number;
  activeBefore?: number;
}

/** A page of sessions as a backend reads it: newest activity first, then id (bytewise) descending. */
export interface SessionFilter {
  /** Conditions of the state (SQL on the sessions table, ANDed). */
  state: readonly string[];
  source?: string;
  /**
   * LIKE patterns (backslash escapes, case ignored) from the text, matched
   * literally: `title` anywhere in the title or the chat key, `id` a prefix
   * of the id or the source (platform).
   */
  like?: { title: string; id: string };
  activeSince?: number;
  activeBefore?: number;
  after?: { lastActivityAt: number; id: string };
  limit: number;
}

/** New messages as a live view reads them. */
export interface MessageRange {
  afterId: number;
  uptoId: number;
  limit: number;
  sessionIds?: readonly string[] | undefined;
}

/** A transcript page as a backend reads it. */
export interface TranscriptPage {
  before: number;
  limit: number;
  includeHistory: boolean;
}

/** The reads of a browse, on one backend. */
export interface BrowseSql {
  sessions(filter: SessionFilter): Promise<Session[]>;
  /** The sessions of these (distinct) ids that exist, in any order. */
  sessionsById(ids: readonly string[]): Promise<Session[]>;
  /** Sessions whose parent is `id`, newest first. */
  children(id: string, limit: number): Promise<Session[]>;
  /**
   * Messages of a session with an ordinal below `before`, newest first, at
   * most `limit`; null when the page is empty and the session does not exist.
   */
  transcript(sessionId: string, page: TranscriptPage): Promise<Message[] | null>;
  /** A number that changes whenever another connection commits. */
  dataVersion(): Promise<number>;
  /** max(messages.id), 0 for none. */
  lastMessageId(): Promise<number>;
  /** Messages with ids in (afterId, uptoId], oldest first, at most `limit`; only these sessions' when given. */
  messagesAfter(range: MessageRange): Promise<Message[]>;
  /** Distinct sources, bytewise order, at most `limit`. */
  platforms(limit: number): Promise<string[]>;
  /** Activity counts and the newest turns' latencies since `range.since` (activity.ts's SQL). */
  activity(
    range: ActivityRange,
  ): Promise<{ counts: ActivityCounts[]; latencies: ActivityLatency[]; usage: ActivityUsage[] }>;
}

/**
 * Reads for people browsing a store (the dashboard): filtered keyset pages
 * of sessions, transcript pages newest first, lineage, and the cheap
 * "did anyone write?" probe live views poll. On SQLite every read runs on
 * the read-only connection (C1).
 */
export class Browse {
  constructor(private readonly sql: BrowseSql) {}

  /** Sessions newest activity first; returns up to `limit` rows (the caller asks for one more to know there is a next page). */
  async sessions(options: BrowseOptions): Promise<Session[]> {
    const state = options.state ?? "visible";
    if (!Object.hasOwn(STATE_WHERE, state)) {
      throw new RangeError(`state must be one of ${SESSION_STATES.join(", ")}`);
    }
    const filter: SessionFilter = { state: STATE_WHERE[state], limit: options.limit };
    if (options.source !== undefined) filter.source = options.source;
    if (options.text !== undefined && options.text !== "") {
      // An escape character: the user's text is matched literally.
      const escaped = options.text.replace(/[\\%_]/g, (c) => `\\${c}`);
      filter.like = { title: `%${escaped}%`, id: `${escaped}%` };
    }
    if (options.activeSince !== undefined) filter.activeSince = options.activeSince;
    if (options.activeBefore !== undefined) filter.activeBefore = options.activeBefore;
    if (options.after) filter.after = options.after;
    return this.sql.sessions(filter);
  }

  /** Sessions by id (missing ones left out), for labelling search hits. */
  async sessionsById(ids: readonly string[]): Promise<Session[]> {
    const wanted = [...new Set(ids)];
    const byId = new Map((await this.sql.sessionsById(wanted)).map((s) => [s.id, s]));
    return wanted.flatMap((id) => byId.get(id) ?? []);
  }

  /** The session's children (sessions whose parent it is), newest first. */
  async children(id: string, limit = CHILDREN_PAGE): Promise<Session[]> {
    return this.sql.children(id, limit);
  }

  /**
   * One page of a transcript, newest first: messages with an ordinal below
   * `before` (all when omitted), at most `limit`. Live messages only unless
   * `includeHistory`. A missing session is HEARTH_SESSION_NOT_FOUND.
   */
  async transcript(
    sessionId: string,
    options: { limit: number; before?: number; includeHistory?: boolean },
  ): Promise<Message[]> {
    const messages = await this.sql.transcript(sessionId, {
      before: options.before ?? Number.MAX_SAFE_INTEGER,
      limit: options.limit,
      includeHistory: Boolean(options.includeHistory),
    });
    if (messages === null) throw sessionNotFound(sessionId);
    return messages;
  }

  /**
   * A number that changes when another connection (another process, or
   * this process's writer) commits: a live view re-reads when it moves.
   * Cheap: no table is read (docs/api.md says what each backend uses).
   */
  async dataVersion(): Promise<number> {
    return this.sql.dataVersion();
  }

  /**
   * Messages, turns, failed turns, tokens and turn latency (p50/p95) per
   * `bucketMs` and platform since `since` (activity.ts).
   */
  async activity(range: ActivityRange): Promise<ActivityBucket[]> {
    if (
      !Number.isSafeInteger(range.since) ||
      !Number.isSafeInteger(range.bucketMs) ||
      range.bucketMs < 60_000
    )
      throw new RangeError("activity: since must be epoch ms and bucketMs at least 60000");
    const { counts, latencies, usage } = await this.sql.activity(range);
    return toBuckets(counts, latencies, usage);
  }

  /** The highest message id (0 for none): where a live view starts. */
  async lastMessageId(): Promise<number> {
    return this.sql.lastMessageId();
  }

  /**
   * Messages stored after `afterId`, oldest first, at most `limit`; with
   * `uptoId`, none past it; with `sessionIds`, only theirs (the rows of
   * other sessions are skipped by id range, never converted).
   */
  async messagesAfter(
    afterId: number,
    limit: number,
    only: { uptoId?: number; sessionIds?: readonly string[] } = {},
  ): Promise<Message[]> {
    return this.sql.messagesAfter({
      afterId,
      uptoId: only.uptoId ?? Number.MAX_SAFE_INTEGER,
      limit,
      sessionIds: only.sessionIds,
    });
  }

  /** Distinct platforms (sources), for filter menus. */
  async platforms(): Promise<string[]> {
    return this.sql.platforms(MAX_PLATFORMS);
  }
}

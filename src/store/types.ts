/** Public shapes of the store API. No SQLite types leak through here. */

import type { JsonObject } from "./metadata.js";

export type { JsonObject, JsonValue } from "./metadata.js";

/** A store opened to write ("writer") or only to read ("reader"). */
export type ConnectionRole = "writer" | "reader";
export type MessageRole = "system" | "user" | "assistant" | "tool";
export type HandoffState = "pending" | "running" | "completed" | "failed";
export type TitleSource = "user" | "auto";

export interface Session {
  id: string;
  profile: string;
  source: string;
  chatKey: string | null;
  title: string | null;
  titleSource: TitleSource | null;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
  endedAt: number | null;
  endReason: string | null;
  parentId: string | null;
  pinned: boolean;
  archived: boolean;
  hidden: boolean;
  handoff: {
    state: HandoffState;
    platform: string | null;
    owner: string | null;
    error: string | null;
    updatedAt: number | null;
  } | null;
  /** Live (active) messages; informational, kept in step by the store. */
  messageCount: number;
  /**
   * Tokens spent in the session: the sum of tokensIn + tokensOut of every
   * message ever appended. A rewind or compaction does not give them back.
   */
  tokenCount: number;
  /** The owner (user, tenant, resource) the session belongs to; indexed, filtered on by list() and search(). */
  ownerId: string | null;
  /** Your JSON object (at most 16 KiB serialised), or null. */
  metadata: JsonObject | null;
}

export interface NewSession {
  /** Defaults to a random UUID. */
  id?: string;
  /** The platform the session came from: "cli", "telegram", "http", ... Defaults to "cli". */
  source?: string;
  chatKey?: string | null;
  title?: string | null;
  /** Defaults to "user" when a title is given. */
  titleSource?: TitleSource;
  /** An existing session's id, else HEARTH_UNKNOWN_PARENT. */
  parentId?: string | null;
  /** The owner (user, tenant, resource): up to 256 characters. */
  ownerId?: string | null;
  /** A plain JSON object, at most 16 KiB serialised and 16 levels deep. */
  metadata?: JsonObject | null;
}

export type MessageContent = string | Record<string, unknown> | unknown[];

export interface Message {
  /** The database identity. Present on every message loaded from the store (D3). */
  id: number;
  sessionId: string;
  ordinal: number;
  role: MessageRole;
  /** null only for an assistant message that just calls tools. */
  content: MessageContent | null;
  name: string | null;
  toolCalls: unknown[] | null;
  toolCallId: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  createdAt: number;
  /** false for history: rewound or compacted messages, kept forever. */
  active: boolean;
  archivedReason: "rewind" | "compaction" | null;
  clientId: string | null;
  metadata: JsonObject | null;
}

export interface NewMessage {
  role: MessageRole;
  /** null is accepted only for an assistant message with toolCalls. */
  content: MessageContent | null;
  name?: string | null;
  toolCalls?: unknown[] | null;
  toolCallId?: string | null;
  tokensIn?: number | null;
  tokensOut?: number | null;
  /**
   * Idempotency key: appending the same clientId to a session twice stores it
   * once (and returns the stored message, even if it was rewound since);
   * the same clientId with different content is HEARTH_IDEMPOTENCY_CONFLICT.
   */
  clientId?: string | null;
  /** Defaults to now. Informational: transcript order is ordinal (commit) order. */
  createdAt?: number;
  /** A plain JSON object, at most 16 KiB serialised and 16 levels deep. */
  metadata?: JsonObject | null;
}

/** A message to save: loaded ones carry their `id` and are never inserted again (D3). */
export type TranscriptEntry = NewMessage & { id?: number };

export type SessionSort = "activity" | "created";

export interface ListSessionsOptions {
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string | null;
  source?: string;
  chatKey?: string;
  includeArchived?: boolean;
  includeHidden?: boolean;
  /** true: only ended sessions; false: only open ones. */
  ended?: boolean;
  pinned?: boolean;
  /** Only sessions of this owner. */
  ownerId?: string;
  sort?: SessionSort;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface SearchOptions {
  limit?: number;
  sessionId?: string;
  /** Include rewound and compacted history. Default false. */
  includeHistory?: boolean;
  /** Only sessions from this platform (`Session.source`). */
  source?: string;
  /** Only sessions of this chat (`Session.chatKey`). */
  chatKey?: string;
  /** Only sessions of this owner. */
  ownerId?: string;
  /** Only messages created at or after this time (epoch ms). */
  since?: number;
  /** Only messages created before this time (epoch ms). */
  until?: number;
  /**
   * What wraps each match in `snippet`: default `["[", "]"]`. A caller that
   * must tell matches from brackets in the text picks characters the text
   * cannot hold (the dashboard uses U+E000 and U+E001). 1 to 8 characters each.
   */
  marks?: [string, string];
}

export interface SearchHit {
  sessionId: string;
  messageId: number;
  ordinal: number;
  role: MessageRole;
  active: boolean;
  /** Matched text with the hits wrapped in [ and ]. */
  snippet: string;
  createdAt: number;
  /** The hit's session as it is now: its title (null when untitled) and source platform. */
  session: {
    title: string | null;
    source: string;
    chatKey: string | null;
    lastActivityAt: number;
  } | null;
}

export interface StoreCounts {
  sessions: number;
  messages: number;
  activeMessages: number;
  archivedMessages: number;
}

/** PostgreSQL's durability settings, read back from the server (SHOW), never echoed from config. */
export interface PgDurabilityReport {
  backend: "postgres";
  /** server_version as the server reports it. */
  serverVersion: string;
  /** synchronous_commit: "on" (or remote_*) waits for the WAL flush before acknowledging a commit. */
  synchronousCommit: string;
  /** fsync: "off" means a server crash can lose or corrupt committed data. */
  fsync: string;
  /** full_page_writes: "off" risks torn pages after an OS crash. */
  fullPageWrites: string;
  walLevel: string;
  /** Settings that weaken durability (fsync off, synchronous_commit off or local, ...), in words. */
  weaknesses: string[];
}

/** Why a commit's fsync left the event loop (null: it did not). */
export type OffLoopReason =
  | "busy-loop"
  | "slow-disk"
  | "backup"
  | "fsync-running"
  | "group-commit"
  | null;

export interface DurabilityReport {
  sqliteVersion: string;
  walResetBug: boolean;
  journalMode: { configured: string; actual: string };
  synchronous: { configured: string; actual: string };
  filesystem: { fstype: string | undefined; magic: string; walUnsafeReason: string | undefined };
  journalSizeLimitBytes: number;
  walAutocheckpointPages: number;
  /**
   * Whether this process's writes fsync the WAL (at FULL) and checkpoint off
   * the event loop (durability.syncOffLoop), read from the live writer:
   * both false for a read-only store, in rollback-journal mode, at OFF or
   * EXTRA, or when the setting is false.
   */
  offLoop: {
    fsync: boolean;
    checkpoint: boolean;
    /**
     * Where this process's last write-path commit fsynced the WAL (with
     * `fsync`; null before the first): "loop" inside SQLite's commit, or
     * "pool" after it, and why (src/store/sqlite/wal-sync/policy.ts).
     */
    lastFsync: { on: "loop" | "pool"; reason: OffLoopReason } | null;
    /**
     * Where the last write-path commit left its checkpoint (null before the
     * first): "commit", inside it as SQLite would (a commit whose fsync stayed
     * on a quiet loop, with durability.checkpointOffLoop "with-fsync", not the default), or "thread".
     */
    lastCheckpoint: "commit" | "thread" | null;
    /**
     * This process's write-path commits since its writer opened, by where
     * their fsync ran: `loop`, or the reason it left (`busy-loop`,
     * `slow-disk`, `backup`, `fsync-running`, `group-commit`). Keys that never happened are absent.
     */
    commits: Partial<Record<"loop" | NonNullable<OffLoopReason>, number>>;
  };
  /**
   * The search-index merges of this process's writes since its writer
   * opened (src/store/sqlite/fts-merge.ts): who merges ("thread": the checkpoint
   * thread; "writer": the writer, inside its write transactions), chunks
   * asked for, how many merged something, failed, and the last failure.
   * null for a reader.
   */
  searchMerges: SearchMergeStats | null;
}

/** What this process's merges did: chunks asked for, merged something, failed (and the last failure). */
export interface SearchMergeStats {
  /** "thread": the checkpoint thread merges; "writer": the writer, inside its write transactions. */
  by: "thread" | "writer";
  asked: number;
  merged: number;
  failed: number;
  lastError: string | null;
}

/**
 * A session's messages, whatever the backend: the public class every store
 * exposes as `store.messages`, and the interface each backend implements
 * with its SQL (sqlite/messages.ts, pg/messages.ts). This class validates
 * and prepares every input before any transaction starts (so bad input
 * changes nothing) and holds the rules that need no transaction; the rules
 * that run inside one (clientId replays, compare-and-set edits) are the
 * neutral helpers of message-write.ts and edits.ts, called by both backends.
 */

import { HearthError } from "../errors.js";
import { markMisuse, requireString } from "./args.js";
import {
  type ArchiveAfterOptions,
  type EditsSql,
  expectation,
  type PopOptions,
  popped,
  type ReplaceSuffixOptions,
  type ReplaceSuffixResult,
  suffixRequest,
  type WaitOptions,
} from "./edits.js";
import {
  checkAfterOrdinal,
  type LoadOptions,
  type LoadWindow,
  loadWindow,
  type PreparedMessage,
  prepare,
} from "./message-input.js";
import type { MetaCas } from "./meta.js";
import type { Redactor } from "./redaction.js";
import type { JsonParts } from "./transcript-json.js";
import type { Message, NewMessage, Session, StoreCounts, TranscriptEntry } from "./types.js";

/**
 * `session`: the session as the append's own statement left it, when the
 * backend read it there at no extra round trip (PostgreSQL's group commit);
 * a caller that wants the session after the commit need not read it again.
 */
export type AppendResult =
  | { ok: true; message: Message; session?: Session }
  | { ok: false; error: Error };

/** One item of a group commit (appendMany). */
export interface AppendItem {
  sessionId: string;
  message: NewMessage;
  /** A meta compare-and-set applied in the same savepoint, before or after the insert (turn leases). */
  metaBefore?: MetaCas;
  metaAfter?: MetaCas;
  /**
   * Answer with the session as this append left it (`session` of the
   * result), read in the commit itself: a caller that returns the session
   * needs no read after it. PostgreSQL reports it always; SQLite when asked
   * (a replayed clientId, which changes no session, reports none).
   */
  withSession?: boolean;
  /**
   * Append only while `sessionId` is still this chat's open session (what
   * sessions.resolveChat answers now), checked in the item's savepoint
   * before anything else: else the item fails with HEARTH_CHAT_MOVED and
   * writes nothing. A process that remembers chats' sessions between turns
   * (the gateway) validates what it remembers this way.
   */
  openChat?: OpenChat | undefined;
}

/** A chat: its platform (the session's source) and chat key. */
export interface OpenChat {
  platform: string;
  chatKey: string;
}

/** A group-commit item whose message was prepared; `i` is its place in the call's items. */
export interface ReadyItem {
  sessionId: string;
  message: PreparedMessage;
  metaBefore?: MetaCas | undefined;
  metaAfter?: MetaCas | undefined;
  withSession?: boolean | undefined;
  openChat?: OpenChat | undefined;
  i: number;
}

/**
 * What a backend does for Messages: each call one transaction (writes) or
 * one snapshot (reads); the edits are EditsSql's (edits.ts).
 */
export interface MessagesSql extends EditsSql {
  /** A backend's own refusal of a prepared message (PostgreSQL: text holding NUL). */
  refuse?(m: PreparedMessage): void;
  append(sessionId: string, m: PreparedMessage, signal?: AbortSignal): Promise<Message>;
  appendBatch(
    sessionId: string,
    messages: readonly PreparedMessage[],
    signal?: AbortSignal,
  ): Promise<Message[]>;
  /** Results in the order of `items`; one failed item fails alone. */
  appendMany(items: readonly ReadyItem[], now: number): Promise<AppendResult[]>;
  /** Refuses (requireOwnEntry) a `known` id that is not this session's; inserts `fresh`. */
  save(
    sessionId: string,
    known: readonly number[],
    fresh: readonly PreparedMessage[],
  ): Promise<Message[]>;
  load(sessionId: string, window: LoadWindow): Promise<Message[]>;
  loadJson(sessionId: string, window: LoadWindow): Promise<Uint8Array>;
  loadJsonParts(sessionId: string, window: LoadWindow): Promise<JsonParts>;
  compact(
    sessionId: string,
    summary: PreparedMessage,
  ): Promise<{ summary: Message; archived: number }>;
  counts(): Promise<{ sessions: number; messages: number; active: number }>;
}

export class Messages {
  constructor(
    private readonly sql: MessagesSql,
    private readonly now: () => number = Date.now,
    /** The profile's redaction (redaction.ts), applied before anything else. */
    private readonly redact?: Redactor,
  ) {}

  /**
   * Append one message in its own transaction. Idempotent on `clientId`.
   * Not an async function: the write path's promise is returned as it is
   * (one promise and two turns of the microtask queue fewer per append);
   * whatever throws still rejects it, as from an async function.
   */
  append(sessionId: string, message: NewMessage, options: WaitOptions = {}): Promise<Message> {
    try {
      requireString(sessionId, "sessionId");
      return this.sql.append(sessionId, this.prepare(message, this.now()), options.signal);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Append several messages in one transaction: all of them or none (D4). */
  async appendBatch(
    sessionId: string,
    messages: readonly NewMessage[],
    options: WaitOptions = {},
  ): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const now = this.now();
    const prepared = messages.map((m) => this.prepare(m, now));
    return this.sql.appendBatch(sessionId, prepared, options.signal);
  }

  /**
   * Group commit: append messages to any sessions in ONE transaction, each
   * item on its own savepoint, so one bad item (an unknown session, invalid
   * input) fails alone while the rest commit together. Every result is known
   * only after the single COMMIT.
   */
  async appendMany(items: readonly AppendItem[]): Promise<AppendResult[]> {
    if (!Array.isArray(items)) throw new TypeError("items must be an array");
    const now = this.now();
    // Filled as items are tried; an Error is built only for one never tried
    // (an Error per item, with its stack, was a measurable share of a turn).
    const results: (AppendResult | undefined)[] = new Array(items.length);
    const ready: ReadyItem[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      try {
        requireString(item.sessionId, "sessionId");
        const message = this.prepare(item.message, now);
        ready.push({
          sessionId: item.sessionId,
          message,
          metaBefore: item.metaBefore,
          metaAfter: item.metaAfter,
          withSession: item.withSession,
          openChat: item.openChat,
          i,
        });
      } catch (err) {
        results[i] = { ok: false, error: markMisuse(err) as Error };
      }
    }
    if (ready.length > 0) {
      const stored = await this.sql.appendMany(ready, now);
      for (let k = 0; k < ready.length; k++) results[ready[k]!.i] = stored[k];
    }
    return Array.from(
      results,
      (r) =>
        r ?? {
          ok: false,
          error: new HearthError("HEARTH_INTERNAL", "internal: the append was not attempted"),
        },
    );
  }

  /**
   * Save a transcript that may mix loaded and new messages. Messages that
   * carry an `id` are already stored and are never inserted again (D3); the
   * rest are appended in one transaction. Returns the newly stored ones.
   */
  async save(sessionId: string, transcript: readonly TranscriptEntry[]): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const now = this.now();
    const fresh = transcript.filter((m) => m.id === undefined).map((m) => this.prepare(m, now));
    const known = transcript.filter((m) => m.id !== undefined).map((m) => m.id!);
    return this.sql.save(sessionId, known, fresh);
  }

  /** The live transcript in order; with `includeHistory`, rewound and compacted messages too. */
  async load(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    return this.sql.load(sessionId, loadWindow(options));
  }

  /**
   * `load()` as UTF-8 JSON bytes (an array of messages), for servers that
   * send it on: with reader threads the bytes are built there and handed
   * over without a copy, and the caller's event loop never holds the rows
   * or encodes the text.
   */
  async loadJson(sessionId: string, options: LoadOptions = {}): Promise<Uint8Array> {
    requireString(sessionId, "sessionId");
    return this.sql.loadJson(sessionId, loadWindow(options));
  }

  /**
   * `loadJson()` in parts (UTF-8; about 1 MiB each from a reader thread, 64 KiB
   * when built on this thread: transcript-json.ts), for servers
   * that stream a long transcript: the rows are read at once (one
   * snapshot), each part is built when the iterator is asked for it, so a
   * response written with backpressure never holds the whole JSON, and no
   * single step holds the event loop long. With reader threads, the rows
   * stay on the thread and each part crosses as bytes (transferred). End
   * the iterator early with `return()` to free the rows.
   */
  async loadJsonParts(sessionId: string, options: LoadOptions = {}): Promise<JsonParts> {
    requireString(sessionId, "sessionId");
    return this.sql.loadJsonParts(sessionId, loadWindow(options));
  }

  /** The last `count` live messages, oldest first: what an agent loop feeds its model. */
  async tail(sessionId: string, count: number): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    return (await this.load(sessionId, { limit: count, order: "newest-first" })).reverse();
  }

  /**
   * Archive every live message after `afterOrdinal` (-1 archives them all), in
   * one transaction. Archived messages stay as history. Returns how many.
   */
  async rewind(
    sessionId: string,
    afterOrdinal: number,
    options: WaitOptions = {},
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    checkAfterOrdinal(afterOrdinal);
    return this.sql.archiveAfter(sessionId, afterOrdinal, undefined, options.signal);
  }

  /**
   * Archive the last live message, atomically: never a message appended
   * meanwhile by another writer. With `expectLastOrdinal`, only if the last
   * live ordinal is still that one (else HEARTH_CONFLICT, nothing changed).
   * Returns the archived message, or null when no message was live.
   */
  async pop(sessionId: string, options: PopOptions = {}): Promise<Message | null> {
    requireString(sessionId, "sessionId");
    const expected = expectation(options.expectLastOrdinal, false);
    const last = await this.sql.pop(sessionId, expected, options.signal);
    return last && popped(last);
  }

  /**
   * rewind() as a compare-and-set: archive every live message after
   * `afterOrdinal` (-1: all) only if the last live ordinal is still
   * `expectLastOrdinal` (else HEARTH_CONFLICT, nothing changed).
   */
  async archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    options: ArchiveAfterOptions,
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    checkAfterOrdinal(afterOrdinal);
    const expected = expectation(options?.expectLastOrdinal, true);
    return this.sql.archiveAfter(sessionId, afterOrdinal, expected, options.signal);
  }

  /**
   * Archive the live messages after `afterOrdinal` and append `messages`
   * in their place, in one transaction, only if the last live ordinal is
   * still `expectLastOrdinal`. With an `idempotencyKey`, a replay returns
   * the first result.
   */
  async replaceSuffix(
    sessionId: string,
    afterOrdinal: number,
    messages: readonly NewMessage[],
    options: ReplaceSuffixOptions,
  ): Promise<ReplaceSuffixResult> {
    requireString(sessionId, "sessionId");
    const request = suffixRequest(afterOrdinal, messages, options, this.now(), (m, now) =>
      this.prepare(m, now),
    );
    return this.sql.replaceSuffix(sessionId, request, options.signal);
  }

  /**
   * Compaction: archive the whole live transcript and start it again from a
   * summary message, in one transaction (D4). Returns the summary message.
   */
  async compact(
    sessionId: string,
    summary: { content: string; tokensOut?: number | null },
  ): Promise<{ summary: Message; archived: number }> {
    requireString(sessionId, "sessionId");
    const prepared = this.prepare(
      {
        role: "system",
        content: summary.content,
        name: "summary",
        tokensOut: summary.tokensOut ?? null,
      },
      this.now(),
    );
    return this.sql.compact(sessionId, prepared);
  }

  async counts(): Promise<StoreCounts> {
    const { sessions, messages, active } = await this.sql.counts();
    return {
      sessions,
      messages,
      activeMessages: active,
      archivedMessages: messages - active,
    };
  }

  /** Validate and serialise before any transaction, then the backend's own refusals. */
  private prepare(message: NewMessage, now: number): PreparedMessage {
    const prepared = prepare(this.redact ? this.redact(message) : message, now);
    this.sql.refuse?.(prepared);
    return prepared;
  }
}

export type { LoadOptions } from "./message-input.js";

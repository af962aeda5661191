/**
 * Messages on PostgreSQL (mirrors ../messages.ts): the same methods, the same
 * results and refusals. Writes are transactions that lock the session row
 * (ordinals allocated under it); reads are single statements.
 */

import { HearthError } from "../../errors.js";
import { markMisuse, requireString } from "../args.js";
import { type LoadOptions, loadWindow, type PreparedMessage, prepare } from "../message-input.js";
import type { Public } from "../public.js";
import { MESSAGE_COLUMNS } from "../rows.js";
import type {
  ArchiveAfterOptions,
  PopOptions,
  ReplaceSuffixOptions,
  ReplaceSuffixResult,
  WaitOptions,
} from "../sqlite/edits.js";
import { checkAfterOrdinal } from "../sqlite/message-write.js";
import type { AppendResult, Messages } from "../sqlite/messages.js";
import type { MetaCas } from "../sqlite/meta.js";
import { sessionNotFound } from "../sqlite/session-create.js";
import { asyncParts, type JsonParts, jsonArrayParts, LOOP_PART_CHARS } from "../transcript-json.js";
import type { Message, NewMessage, StoreCounts, TranscriptEntry } from "../types.js";
import { archiveAfter, pop, replaceSuffix } from "./edits.js";
import { appendGroup, GroupItemFails } from "./group-append.js";
import { archiveSuffix, insertMessage, lockSession, requireLiveOrdinal } from "./message-write.js";
import { casOn } from "./meta.js";
import { fromPgError, type PgClient, type PgDb } from "./pool.js";
import { messageFromArray, num, refuseNulMessage } from "./rows.js";
import { write } from "./write.js";

export class PgMessages implements Public<Messages> {
  constructor(private readonly db: PgDb) {}

  /** Append one message in its own transaction. Idempotent on `clientId`. */
  async append(
    sessionId: string,
    message: NewMessage,
    options: WaitOptions = {},
  ): Promise<Message> {
    requireString(sessionId, "sessionId");
    const prepared = refuseNulMessage(prepare(message, Date.now()));
    return write(this.db, "append a message", options.signal, (client) =>
      insertMessage(client, sessionId, prepared),
    );
  }

  /** Append several messages in one transaction: all of them or none. */
  async appendBatch(
    sessionId: string,
    messages: readonly NewMessage[],
    options: WaitOptions = {},
  ): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const now = Date.now();
    const prepared = messages.map((m) => refuseNulMessage(prepare(m, now)));
    return write(this.db, "append messages", options.signal, async (client) => {
      const stored: Message[] = [];
      for (const m of prepared) stored.push(await insertMessage(client, sessionId, m));
      return stored;
    });
  }

  /**
   * Group commit: append to any sessions in ONE transaction (each item with
   * its meta compare-and-sets before and after), so one bad item fails alone
   * while the rest commit together. The first attempt writes every item in
   * a few statements (group-append.ts: ~7 round trips for the batch instead
   * of 4 to 10 per item); when an item would fail, that attempt is rolled
   * back and the batch runs again item by item, each in its own savepoint.
   * Results are known only after the COMMIT; a transaction retried after a
   * deadlock starts every item again.
   */
  async appendMany(
    items: readonly {
      sessionId: string;
      message: NewMessage;
      metaBefore?: MetaCas;
      metaAfter?: MetaCas;
    }[],
  ): Promise<AppendResult[]> {
    const now = Date.now();
    const refused: (AppendResult | undefined)[] = [];
    const prepared = items.map((item, i) => {
      try {
        requireString(item.sessionId, "sessionId");
        return refuseNulMessage(prepare(item.message, now));
      } catch (err) {
        refused[i] = { ok: false, error: markMisuse(err) as Error };
        return undefined;
      }
    });
    const initial = (): AppendResult[] =>
      items.map(
        (_, i) =>
          refused[i] ?? {
            ok: false,
            error: new HearthError("HEARTH_INTERNAL", "internal: the append was not attempted"),
          },
      );
    if (prepared.every((p) => p === undefined)) return initial();
    // First all items in a few statements (src/store/pg/group-append.ts).
    const grouped = (client: PgClient) => {
      const ready = items
        .map((item, i) => ({ ...item, message: prepared[i], i }))
        .filter((x): x is typeof x & { message: PreparedMessage } => x.message !== undefined);
      return appendGroup(client, ready, now).then(
        (stored) => {
          const results = initial();
          ready.forEach((x, k) => {
            results[x.i] = { ok: true, message: stored[k]! };
          });
          return results;
        },
        (err: unknown) => {
          // A lost connection or a deadlock is the whole transaction's, not an item's.
          throw err instanceof GroupItemFails || isItemError(err) ? new ItemFailed() : err;
        },
      );
    };
    // When one item fails there: again, item by item, each in its own savepoint.
    const isolated = async (client: PgClient) => {
      const results = initial();
      for (let i = 0; i < items.length; i++) {
        const p = prepared[i];
        const item = items[i]!;
        if (!p) continue;
        await client.query("SAVEPOINT hearth_item");
        try {
          if (item.metaBefore)
            await casOn(client, item.metaBefore.key, item.metaBefore.decide, now);
          results[i] = { ok: true, message: await insertMessage(client, item.sessionId, p) };
          if (item.metaAfter) await casOn(client, item.metaAfter.key, item.metaAfter.decide, now);
          await client.query("RELEASE SAVEPOINT hearth_item");
        } catch (err) {
          if (!isItemError(err)) throw err;
          await client.query("ROLLBACK TO SAVEPOINT hearth_item");
          await client.query("RELEASE SAVEPOINT hearth_item");
          results[i] = { ok: false, error: coded(err, this.db.url) };
        }
      }
      return results;
    };
    const doing = "append messages (group commit)";
    try {
      return await this.db.transaction(doing, grouped);
    } catch (err) {
      if (err instanceof ItemFailed || (err as { cause?: unknown }).cause instanceof ItemFailed)
        return this.db.transaction(doing, isolated);
      throw err;
    }
  }

  /** Save a transcript mixing loaded (with `id`) and new messages; only new ones are inserted. */
  async save(sessionId: string, transcript: readonly TranscriptEntry[]): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const now = Date.now();
    const fresh = transcript
      .filter((m) => m.id === undefined)
      .map((m) => refuseNulMessage(prepare(m, now)));
    const known = transcript.filter((m) => m.id !== undefined).map((m) => m.id!);
    return this.db.transaction("save a transcript", async (client) => {
      for (const id of known) {
        const { rows } = await client.query("SELECT session_id FROM messages WHERE id = $1", [
          Number.isSafeInteger(id) ? id : -1,
        ]);
        if (rows[0]?.session_id !== sessionId) {
          throw new RangeError(
            `transcript entry with id ${id} is not a stored message of session ${sessionId}`,
          );
        }
      }
      const stored: Message[] = [];
      for (const m of fresh) stored.push(await insertMessage(client, sessionId, m));
      return stored;
    });
  }

  /** The live transcript in order; with `includeHistory`, rewound and compacted messages too. */
  async load(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    const { where, params, order, limit } = loadWindow(options);
    if (typeof sessionId === "string" && sessionId.includes("\u0000"))
      throw sessionNotFound(sessionId);
    const history = options.includeHistory ? "" : "AND active = 1";
    let n = 1;
    const numbered = where.replace(/\?/g, () => `$${++n}`);
    const all: unknown[] = [sessionId, ...params];
    if (limit !== undefined) all.push(limit);
    const rows = await this.db.queryArrays(
      "load a transcript",
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ${history} ${numbered}
       ORDER BY ordinal ${order}${limit === undefined ? "" : ` LIMIT $${all.length}`}`,
      all,
    );
    if (rows.length === 0) {
      const exists = await this.db.query(
        "load a transcript",
        "SELECT 1 FROM sessions WHERE id = $1",
        [sessionId],
      );
      if (exists.rowCount === 0) throw sessionNotFound(sessionId);
    }
    return rows.map((r) => messageFromArray(sessionId, r));
  }

  /** `load()` as UTF-8 JSON bytes (an array of messages). */
  async loadJson(sessionId: string, options: LoadOptions = {}): Promise<Uint8Array> {
    requireString(sessionId, "sessionId");
    return new TextEncoder().encode(JSON.stringify(await this.load(sessionId, options)));
  }

  /** The transcript's JSON (as loadJson's bytes) in parts, each built in a task of its own. */
  async loadJsonParts(sessionId: string, options: LoadOptions = {}): Promise<JsonParts> {
    requireString(sessionId, "sessionId");
    const messages = await this.load(sessionId, options);
    return asyncParts(jsonArrayParts(messages, (m) => m, LOOP_PART_CHARS));
  }

  /** The last `count` live messages, oldest first. */
  async tail(sessionId: string, count: number): Promise<Message[]> {
    requireString(sessionId, "sessionId");
    return (await this.load(sessionId, { limit: count, order: "newest-first" })).reverse();
  }

  /** Archive every live message after `afterOrdinal` (-1: all). Archived messages stay as history. */
  async rewind(
    sessionId: string,
    afterOrdinal: number,
    options: WaitOptions = {},
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    checkAfterOrdinal(afterOrdinal);
    return write(this.db, "rewind a session", options.signal, async (client) => {
      await lockSession(client, sessionId);
      await requireLiveOrdinal(client, sessionId, afterOrdinal);
      return archiveSuffix(client, sessionId, afterOrdinal, "rewind", Date.now());
    });
  }

  async pop(sessionId: string, options?: PopOptions): Promise<Message | null> {
    requireString(sessionId, "sessionId");
    return pop(this.db, sessionId, options);
  }

  async archiveAfter(
    sessionId: string,
    afterOrdinal: number,
    options: ArchiveAfterOptions,
  ): Promise<number> {
    requireString(sessionId, "sessionId");
    return archiveAfter(this.db, sessionId, afterOrdinal, options);
  }

  async replaceSuffix(
    sessionId: string,
    afterOrdinal: number,
    messages: readonly NewMessage[],
    options: ReplaceSuffixOptions,
  ): Promise<ReplaceSuffixResult> {
    requireString(sessionId, "sessionId");
    return replaceSuffix(this.db, sessionId, afterOrdinal, messages, options);
  }

  /** Compaction: archive the whole live transcript and restart it from a summary, in one transaction. */
  async compact(
    sessionId: string,
    summary: { content: string; tokensOut?: number | null },
  ): Promise<{ summary: Message; archived: number }> {
    requireString(sessionId, "sessionId");
    const prepared = refuseNulMessage(
      prepare(
        {
          role: "system",
          content: summary.content,
          name: "summary",
          tokensOut: summary.tokensOut ?? null,
        },
        Date.now(),
      ),
    );
    return this.db.transaction("compact a session", async (client) => {
      await lockSession(client, sessionId);
      const archived = await archiveSuffix(client, sessionId, -1, "compaction", Date.now());
      return { summary: await insertMessage(client, sessionId, prepared), archived };
    });
  }

  async counts(): Promise<StoreCounts> {
    const { rows } = await this.db.query(
      "count rows",
      `SELECT (SELECT count(*) FROM sessions) AS sessions,
              (SELECT count(*) FROM messages) AS messages,
              (SELECT count(*) FROM messages WHERE active = 1) AS active`,
    );
    const r = rows[0]!;
    const messages = num(r.messages);
    const active = num(r.active);
    return {
      sessions: num(r.sessions),
      messages,
      activeMessages: active,
      archivedMessages: messages - active,
    };
  }
}

function coded(err: unknown, url: string): Error {
  return err instanceof HearthError || err instanceof TypeError || err instanceof RangeError
    ? err
    : fromPgError(err, url, "append a message");
}

/** An item of a group commit would fail in the grouped attempt (appendMany runs it again, item by item). */
class ItemFailed extends Error {}

/** An error one group-commit item owns (bad input, unknown session, a refused CAS), not the transaction's. */
function isItemError(err: unknown): boolean {
  const state = (err as { code?: unknown }).code;
  if (typeof state === "string" && /^(08|40|57|53)/.test(state)) return false;
  if (typeof state === "string" && /^E[A-Z]+$/.test(state)) return false;
  return true;
}

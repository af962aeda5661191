/**
 * Messages on PostgreSQL: the SQL behind ../messages.ts (which validates
 * and prepares every input first). Writes are transactions that lock the
 * session row (ordinals allocated under it); reads are single statements.
 */
import { HearthError } from "../../errors.js";
import type { LoadWindow, PreparedMessage } from "../message-input.js";
import { requireOwnEntry } from "../message-write.js";
import type { AppendResult, MessagesSql, ReadyItem } from "../messages.js";
import { MESSAGE_COLUMNS } from "../rows.js";
import { sessionNotFound } from "../session-create.js";
import { dollarParams } from "../sql.js";
import { asyncParts, type JsonParts, jsonArrayParts, LOOP_PART_CHARS } from "../transcript-json.js";
import type { Message } from "../types.js";
import { PgEdits } from "./edits.js";
import { appendGroup, GroupItemFails } from "./group-append.js";
import { archiveSuffix, insertMessage, lockSession } from "./message-write.js";
import { casOn, lockMetaKey, withClaimsHeld } from "./meta.js";
import { requireOpenChat } from "./open-chat.js";
import type { OwnerPresence } from "./owner-presence.js";
import { fromPgError, type PgClient, type PgDb } from "./pool.js";
import { messageFromArray, num, refuseNulMessage } from "./rows.js";
import { refuseNulId } from "./session-create.js";
import { write } from "./write.js";

/** The edits (pop, archiveAfter, replaceSuffix) are PgEdits's. */
export class PgMessages extends PgEdits implements MessagesSql {
  constructor(
    db: PgDb,
    /** The presence of the owners the items' meta changes claim as (turn leases). */
    private readonly owners: OwnerPresence,
  ) {
    super(db);
  }

  /** PostgreSQL text cannot hold NUL: refused before any transaction. */
  refuse(m: PreparedMessage): void {
    refuseNulMessage(m);
  }

  append(sessionId: string, m: PreparedMessage, signal?: AbortSignal): Promise<Message> {
    return write(this.db, "append a message", signal, (client) =>
      insertMessage(client, sessionId, m),
    );
  }

  appendBatch(
    sessionId: string,
    messages: readonly PreparedMessage[],
    signal?: AbortSignal,
  ): Promise<Message[]> {
    return write(this.db, "append messages", signal, (client) =>
      insertAll(client, sessionId, messages),
    );
  }

  save(
    sessionId: string,
    known: readonly number[],
    fresh: readonly PreparedMessage[],
  ): Promise<Message[]> {
    return this.db.transaction("save a transcript", async (client) => {
      for (const id of known) {
        const { rows } = await client.query("SELECT session_id FROM messages WHERE id = $1", [
          Number.isSafeInteger(id) ? id : -1,
        ]);
        requireOwnEntry(id, rows[0]?.session_id, sessionId);
      }
      return insertAll(client, sessionId, fresh);
    });
  }

  /**
   * Group commit in ONE transaction. The first attempt writes every item in
   * a few statements (group-append.ts: 5 round trips for the batch instead
   * of 4 to 10 per item; each result with its session as the batch left it); when an item would fail, that attempt is rolled
   * back and the batch runs again item by item, each in its own savepoint.
   * A transaction retried after a deadlock starts every item again.
   */
  async appendMany(items: readonly ReadyItem[], now: number): Promise<AppendResult[]> {
    const changes = items.flatMap((i) => [i.metaBefore, i.metaAfter]);
    // First all items in a few statements (src/store/pg/group-append.ts).
    const grouped = withClaimsHeld(this.owners, changes, (client) =>
      appendGroup(client, items, now).then(
        (stored) => stored.map((r): AppendResult => ({ ok: true, ...r })),
        (err: unknown) => {
          // A lost connection or a deadlock is the whole transaction's, not an item's.
          throw err instanceof GroupItemFails || isItemError(err) ? new ItemFailed() : err;
        },
      ),
    );
    // When one item fails there: again, item by item, each in its own savepoint.
    const isolated = withClaimsHeld(this.owners, changes, async (client) => {
      const results: AppendResult[] = [];
      for (const item of items) {
        await client.query("SAVEPOINT hearth_item");
        try {
          const { metaBefore: before, metaAfter: after, openChat } = item;
          if (openChat) {
            // Its meta key's lock before the session's row, the grouped attempt's order (no deadlock between them).
            if (before) await lockMetaKey(client, before.key);
            await requireOpenChat(client, openChat, item.sessionId);
          }
          if (before) await casOn(client, before.key, before.decide, now, before.presence);
          const message = await insertMessage(client, item.sessionId, item.message);
          if (after) await casOn(client, after.key, after.decide, now, after.presence);
          await client.query("RELEASE SAVEPOINT hearth_item");
          results.push({ ok: true, message });
        } catch (err) {
          if (!isItemError(err)) throw err;
          await client.query("ROLLBACK TO SAVEPOINT hearth_item");
          await client.query("RELEASE SAVEPOINT hearth_item");
          results.push({ ok: false, error: coded(err, this.db.url) });
        }
      }
      return results;
    });
    const doing = "append messages (group commit)";
    try {
      return await this.db.transaction(doing, grouped);
    } catch (err) {
      if (err instanceof ItemFailed || (err as { cause?: unknown }).cause instanceof ItemFailed)
        return this.db.transaction(doing, isolated);
      throw err;
    }
  }

  async load(sessionId: string, window: LoadWindow): Promise<Message[]> {
    const { where, params, order, limit } = window;
    refuseNulId(sessionId);
    const history = window.includeHistory ? "" : "AND active = 1";
    const numbered = dollarParams(where, 2);
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

  async loadJson(sessionId: string, window: LoadWindow): Promise<Uint8Array> {
    return new TextEncoder().encode(JSON.stringify(await this.load(sessionId, window)));
  }

  /** Each part built in a task of its own. */
  async loadJsonParts(sessionId: string, window: LoadWindow): Promise<JsonParts> {
    const messages = await this.load(sessionId, window);
    return asyncParts(jsonArrayParts(messages, (m) => m, LOOP_PART_CHARS));
  }

  compact(
    sessionId: string,
    summary: PreparedMessage,
  ): Promise<{ summary: Message; archived: number }> {
    return this.db.transaction("compact a session", async (client) => {
      await lockSession(client, sessionId);
      const archived = await archiveSuffix(client, sessionId, -1, "compaction", Date.now());
      return { summary: await insertMessage(client, sessionId, summary), archived };
    });
  }

  async counts(): Promise<{ sessions: number; messages: number; active: number }> {
    const { rows } = await this.db.query(
      "count rows",
      `SELECT (SELECT count(*) FROM sessions) AS sessions,
              (SELECT count(*) FROM messages) AS messages,
              (SELECT count(*) FROM messages WHERE active = 1) AS active`,
    );
    const r = rows[0]!;
    return { sessions: num(r.sessions), messages: num(r.messages), active: num(r.active) };
  }
}

/** Insert `messages` one after the other on `client` (inside its transaction). */
async function insertAll(
  client: PgClient,
  sessionId: string,
  messages: readonly PreparedMessage[],
): Promise<Message[]> {
  const stored: Message[] = [];
  for (const m of messages) stored.push(await insertMessage(client, sessionId, m));
  return stored;
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

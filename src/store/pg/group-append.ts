/**
 * The first attempt of a PostgreSQL group commit (PgMessages.appendMany) in
 * a fixed number of round trips, whatever the number of items: every lock
 * in one statement (the meta keys' advisory locks, then the sessions'
 * rows), what the locks guard in one (the meta values and the clientId
 * probe), every message and the meta writes in one INSERT: 5 with BEGIN
 * and COMMIT (8 before; workload 18). Item by item it took 4 to 10
 * round trips per message (benchmark workload 17).
 *
 * The items' meta decisions run here, in item order, on the values read
 * under the locks, exactly as one casOn after the other would see them; the
 * rows are written after. Whenever an item would fail (an unknown session,
 * a refused or throwing decision, a clientId stored with other content or
 * used twice in the batch), nothing is written: the caller rolls back and
 * runs the batch again item by item, each in its own savepoint, where that
 * item fails alone; so does an item whose openChat finds its session no
 * longer the chat's open one (open-chat.ts). Locks are taken in one order
 * (advisory locks by key hash, then session rows by id), so two hosts'
 * batches never deadlock each other.
 *
 * The three statements every batch runs are prepared (PreparedSql): each
 * pooled connection parses and plans them once (the server's CPU per
 * message, benchmark workload 18).
 */
import type { PreparedMessage } from "../message-input.js";
import { messageTokens, messageValues, sameContent, storedMessage } from "../message-write.js";
import type { OpenChat } from "../messages.js";
import type { MetaCas } from "../meta.js";
import { toMessage, toSession } from "../rows.js";
import type { Message, Session } from "../types.js";
import { META_LOCK, presenceAnswers } from "./meta.js";
import { OPEN_CHATS_MOVED } from "./open-chat.js";
import type { PgClient, PreparedSql } from "./pool.js";
import { messageRow, num, refuseNul, SESSION_ROW_COLUMNS, sessionRow } from "./rows.js";

export interface GroupItem {
  sessionId: string;
  message: PreparedMessage;
  metaBefore?: MetaCas | undefined;
  metaAfter?: MetaCas | undefined;
  openChat?: OpenChat | undefined;
}

/** An item of the batch would fail: run the batch item by item instead. */
export class GroupItemFails extends Error {}

/** A stored message; with its session as the batch's INSERT left it, when it inserted one. */
export interface Stored {
  message: Message;
  session?: Session;
}

/** Every item's stored message, in order; throws GroupItemFails (nothing written) when one would fail. */
export async function appendGroup(
  client: PgClient,
  items: readonly GroupItem[],
  now: number,
): Promise<Stored[]> {
  const keys = [
    ...new Set(items.flatMap((i) => [i.metaBefore?.key, i.metaAfter?.key].filter(isString))),
  ];
  const sessions = [...new Set(items.map((i) => i.sessionId))].sort();
  const keyed = items.filter((i) => i.message.clientId !== null);
  // One clientId twice in a batch: the second is a replay of the first, which the savepoint path handles.
  if (new Set(keyed.map((i) => `${i.sessionId}\u0000${i.message.clientId}`)).size !== keyed.length)
    throw new GroupItemFails();
  const locked = await client.query({ ...LOCK, values: [META_LOCK, keys, sessions] });
  if (locked.rowCount !== sessions.length) throw new GroupItemFails();
  const { values, storedIds, moved } = await readLocked(client, keys, keyed, items);
  if (moved) throw new GroupItemFails();
  const meta = await decideMeta(client, items, values);
  const replays = await storedReplays(client, items, storedIds);
  const fresh = items.filter((_, i) => !replays.has(i));
  let inserted: Stored[] = [];
  if (fresh.length > 0) inserted = await insertAll(client, fresh, meta, now);
  else await writeMeta(client, meta, now);
  let next = 0;
  return items.map((_, i) => {
    const replay = replays.get(i);
    return replay ? { message: replay } : inserted[next++]!;
  });
}

/**
 * Every lock of the batch in one statement: the meta keys' advisory locks
 * (by key hash: the one-time filter runs the CTE before the scan), then the
 * sessions' rows (by id). Their values are read by the next statement,
 * whose snapshot is taken once every lock is held: a value or message that
 * another holder committed while this one waited is in it (decideMeta's
 * lock would protect nothing if the read shared this statement's snapshot).
 */
const LOCK: PreparedSql = {
  name: "hearth_group_lock",
  text: `WITH meta_locks AS (
    SELECT pg_advisory_xact_lock($1, h)
    FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($2::text[]) AS k ORDER BY 1 OFFSET 0) AS s)
  SELECT id FROM sessions
  WHERE id = ANY($3::text[]) AND (SELECT count(*) FROM meta_locks) >= 0
  ORDER BY id FOR UPDATE`,
};

/**
 * Under the locks, in one statement: the meta keys' values, the ids of the
 * messages already stored under an item's clientId in its session, and
 * whether an item's openChat finds its session moved (the session rows
 * are locked by now, so no end or delete of them can commit before this
 * transaction does: open-chat.ts).
 */
async function readLocked(
  client: PgClient,
  keys: readonly string[],
  keyed: readonly GroupItem[],
  items: readonly GroupItem[],
): Promise<{ values: Map<string, string | null>; storedIds: number[]; moved: boolean }> {
  const values = new Map<string, string | null>();
  const storedIds: number[] = [];
  const chats = items.filter((i) => i.openChat !== undefined);
  if (keys.length === 0 && keyed.length === 0 && chats.length === 0)
    return { values, storedIds, moved: false };
  const { rows } = await client.query({
    ...READ_LOCKED,
    values: [
      keys,
      keyed.map((i) => i.sessionId),
      keyed.map((i) => i.message.clientId),
      chats.map((i) => i.sessionId),
      chats.map((i) => i.openChat!.platform),
      chats.map((i) => i.openChat!.chatKey),
    ],
  });
  let moved = false;
  for (const r of rows) {
    if (r.moved !== null) moved = true;
    else if (r.message_id === null) values.set(r.key as string, r.value as string);
    else storedIds.push(num(r.message_id));
  }
  return { values, storedIds, moved };
}

const READ_LOCKED: PreparedSql = {
  name: "hearth_group_read",
  text: `SELECT key, value, NULL::bigint AS message_id, NULL::text AS moved FROM meta
    WHERE key = ANY($1::text[])
  UNION ALL
  SELECT NULL, NULL, m.id, NULL FROM messages m
    JOIN unnest($2::text[], $3::text[]) AS k(session_id, client_id)
      ON m.session_id = k.session_id AND m.client_id = k.client_id
  UNION ALL
  ${OPEN_CHATS_MOVED}`,
};

/**
 * Run each item's meta decisions in order on the values read under the
 * locks. Returns the keys to write: a value, or null to delete.
 */
async function decideMeta(
  client: PgClient,
  items: readonly GroupItem[],
  values: Map<string, string | null>,
): Promise<Map<string, string | null>> {
  const changed = new Map<string, string | null>();
  if (!items.some((i) => i.metaBefore || i.metaAfter)) return changed;
  // A change with presence (a turn lease) is told whether the owner its
  // current value names is alive, as the server says (owner-presence.ts).
  const alive = await presenceAnswers(
    client,
    items.flatMap((i) => [i.metaBefore, i.metaAfter]),
    [...values.values()],
  );
  const decide = (cas: MetaCas | undefined) => {
    if (!cas) return;
    let next: string | null | undefined;
    try {
      const current = values.get(cas.key) ?? null;
      next = cas.decide(current, alive(cas, current));
      if (next !== undefined && next !== null) refuseNul(next, "value");
    } catch {
      throw new GroupItemFails();
    }
    if (next === undefined) return;
    values.set(cas.key, next);
    changed.set(cas.key, next);
  };
  for (const item of items) {
    decide(item.metaBefore);
    decide(item.metaAfter);
  }
  return changed;
}

/**
 * The items whose clientId is already stored in their session with the same
 * content, by index: they return the stored message and insert nothing.
 * A round trip only when readLocked found such messages (a client's retry).
 */
async function storedReplays(
  client: PgClient,
  items: readonly GroupItem[],
  storedIds: readonly number[],
): Promise<Map<number, Message>> {
  const replays = new Map<number, Message>();
  if (storedIds.length === 0) return replays;
  const { rows } = await client.query("SELECT * FROM messages WHERE id = ANY($1::bigint[])", [
    storedIds,
  ]);
  const stored = new Map(
    rows.map((r) => {
      const row = messageRow(r);
      return [`${row.session_id}\u0000${row.client_id}`, row] as const;
    }),
  );
  items.forEach((item, i) => {
    if (item.message.clientId === null) return;
    const row = stored.get(`${item.sessionId}\u0000${item.message.clientId}`);
    if (!row) return;
    if (!sameContent(row, item.message)) throw new GroupItemFails();
    replays.set(i, toMessage(row));
  });
  return replays;
}

/**
 * One INSERT for every new message: each session's counters move once by
 * its count, and its messages take the ordinals after its last, in item
 * order (so do their ids). The same columns and values as APPEND_SQL. Each
 * row also carries its session as the UPDATE left it: the turn that
 * returns the session after its reply reads it here, not in a round trip
 * of its own (half a statement per message, workload 18). The batch's meta
 * changes ride along (data-modifying WITHs always run; the deleted and the
 * upserted keys are distinct): no round trip of their own.
 */
const INSERT_ALL: PreparedSql = {
  name: "hearth_group_insert",
  text: `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
      $7::text[], $8::integer[], $9::integer[], $10::bigint[], $11::text[], $12::text[],
      $13::bigint[])
    WITH ORDINALITY AS t(session_id, role, content, content_type, name, tool_calls,
      tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata, tokens, idx)),
  per AS (
    SELECT session_id, count(*) AS n, sum(tokens) AS tokens, max(created_at) AS latest,
      (array_agg(created_at ORDER BY idx DESC))[1] AS last
    FROM input GROUP BY session_id),
  slot AS (
    UPDATE sessions s SET next_ordinal = s.next_ordinal + per.n,
      message_count = s.message_count + per.n, token_count = s.token_count + per.tokens,
      last_activity_at = greatest(s.last_activity_at, per.latest), updated_at = per.last
    FROM per WHERE s.id = per.session_id
    RETURNING s.*, s.next_ordinal - per.n AS first),
  ins AS (
    INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
      tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
    SELECT i.session_id,
      slot.first + row_number() OVER (PARTITION BY i.session_id ORDER BY i.idx) - 1,
      i.role, i.content, i.content_type, i.name, i.tool_calls, i.tool_call_id, i.tokens_in,
      i.tokens_out, i.created_at, i.client_id, i.metadata
    FROM input i JOIN slot ON slot.id = i.session_id
    ORDER BY i.idx
    RETURNING id, session_id, ordinal),
  gone AS (DELETE FROM meta WHERE key = ANY($14::text[])),
  kept AS (
    INSERT INTO meta (key, value, updated_at)
    SELECT k, v, $17::bigint FROM unnest($15::text[], $16::text[]) AS t(k, v)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at)
  SELECT ins.id AS inserted_id, ins.ordinal AS inserted_ordinal,
    ${SESSION_ROW_COLUMNS.map((c) => `slot.${c}`).join(", ")}
  FROM ins JOIN slot ON slot.id = ins.session_id`,
};

async function insertAll(
  client: PgClient,
  items: readonly GroupItem[],
  meta: ReadonlyMap<string, string | null>,
  now: number,
): Promise<Stored[]> {
  const columns: unknown[][] = Array.from({ length: 13 }, () => []);
  for (const { sessionId, message: m } of items) {
    const values = [sessionId, ...messageValues(m), messageTokens(m)];
    for (let c = 0; c < values.length; c++) columns[c]!.push(values[c]);
  }
  const { set, gone } = metaWrites(meta);
  const { rows } = await client.query({
    ...INSERT_ALL,
    values: [...columns, gone, set.map(([k]) => k), set.map(([, v]) => v), now],
  });
  if (rows.length !== items.length) throw new GroupItemFails();
  // Per session, the ordinals in item order.
  const ordinals = new Map<string, { id: number; ordinal: number }[]>();
  const sessions = new Map<string, Session>();
  for (const r of rows) {
    const id = r.id as string;
    const list = ordinals.get(id) ?? [];
    list.push({ id: num(r.inserted_id), ordinal: num(r.inserted_ordinal) });
    ordinals.set(id, list);
    if (!sessions.has(id)) sessions.set(id, toSession(sessionRow(r)));
  }
  for (const list of ordinals.values()) list.sort((a, b) => a.ordinal - b.ordinal);
  const taken = new Map<string, number>();
  return items.map(({ sessionId, message }) => {
    const at = taken.get(sessionId) ?? 0;
    taken.set(sessionId, at + 1);
    const row = ordinals.get(sessionId)![at]!;
    return {
      message: storedMessage(message, sessionId, row.id, row.ordinal),
      session: sessions.get(sessionId)!,
    };
  });
}

/**
 * The batch's meta changes in one statement: the deletions (a data-modifying
 * WITH always runs) and the values' upsert. The keys are distinct, so the
 * two never touch one row. A batch of turns both claims leases (its users'
 * messages) and releases them (its replies): one round trip, not two.
 */
async function writeMeta(
  client: PgClient,
  changed: ReadonlyMap<string, string | null>,
  now: number,
): Promise<void> {
  if (changed.size === 0) return;
  const { set, gone } = metaWrites(changed);
  await client.query(
    `WITH gone AS (DELETE FROM meta WHERE key = ANY($4::text[]))
     INSERT INTO meta (key, value, updated_at)
     SELECT k, v, $3::bigint FROM unnest($1::text[], $2::text[]) AS t(k, v)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    [set.map(([k]) => k), set.map(([, v]) => v), now, gone],
  );
}

/** The keys to upsert with their values, and the keys to delete. */
function metaWrites(changed: ReadonlyMap<string, string | null>) {
  const set = [...changed].filter((e): e is [string, string] => e[1] !== null);
  const gone = [...changed].filter(([, v]) => v === null).map(([k]) => k);
  return { set, gone };
}

function isString(value: string | undefined): value is string {
  return value !== undefined;
}

// The raw-pg ceiling of workload 18: the rows a gateway window wrote,
// written again by raw pg on the same server and database (fresh sessions
// of their own), in the fewest round trips the same work allows:
//   per chat   the window's new chats only (sessions the gateway created in
//   started    the window; older ones are inserted before the timing, as the
//              gateway had them): one read, the chat lookup, finds none, and
//              ONE INSERT writes the session with the title and metadata the
//              gateway gave it. A turn on a chat seen before reads nothing:
//              the gateway remembers each chat's session (ChatSessions, on
//              both backends since 761bf38), so the ceiling does too (it
//              read the session for every turn before). A batch's reads are
//              sent at once on the pool, as the gateway's concurrent clients
//              send theirs (one at a time, the server spent less CPU per
//              read than it does under the gateway's concurrency: a ceiling
//              of other work);
//   per batch  ONE statement, in its own implicit transaction (no BEGIN or
//              COMMIT): the batch's messages inserted with their ordinals,
//              the sessions' counters moved, and the turn leases written as
//              hearth's group commit leaves them (a user message takes its
//              session's lease key, the reply deletes it; net per key).
// Every statement is prepared once per connection (named), as hearth's
// chat lookup and group-commit statements are: the server parses and plans
// each once per connection, on both sides.
// Batches are the gateway's own group commits (gatewayBatches), in message
// id order, one at a time as the gateway's group commit runs them (one
// commit in flight; with more, a reply's batch waits on its user message's
// batch for the session row, and pg_stat_statements' execution time counts
// the wait). The sessions' last activity moves with each batch, as the
// gateway's did. Measured as for the gateway: the database's backends'
// CPU, pg_stat_statements calls, and this client's queries (its round trips).
import { randomUUID } from "node:crypto";
import { cpuMs } from "./gateway-servers.mjs";
import { admin, backendPids, rawPool } from "./pg.mjs";
import { statementCounts, statementDiff } from "./pg-embedded.mjs";

const IN_FLIGHT = 1;

const WRITE_SQL = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])
      WITH ORDINALITY AS t(session_id, role, content, created_at, client_id, idx)),
  per AS (
    SELECT session_id, count(*) AS n, max(created_at) AS latest FROM input GROUP BY session_id),
  slot AS (
    UPDATE sessions s SET next_ordinal = s.next_ordinal + per.n,
      message_count = s.message_count + per.n,
      last_activity_at = greatest(s.last_activity_at, per.latest), updated_at = per.latest
    FROM per WHERE s.id = per.session_id
    RETURNING s.id, s.next_ordinal - per.n AS first),
  taken AS (
    INSERT INTO meta (key, value, updated_at)
    SELECT k, v, $8::bigint FROM unnest($6::text[], $7::text[]) AS t(k, v)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at),
  released AS (DELETE FROM meta WHERE key = ANY($9::text[]))
  INSERT INTO messages (session_id, ordinal, role, content, content_type, created_at, client_id)
  SELECT i.session_id, slot.first + row_number() OVER (PARTITION BY i.session_id ORDER BY i.idx) - 1,
    i.role, i.content, 'text', i.created_at, i.client_id
  FROM input i JOIN slot ON slot.id = i.session_id ORDER BY i.idx
  RETURNING id, session_id, ordinal`;

const READ_SQL = `SELECT * FROM sessions WHERE source = $1 AND chat_key = $2 AND ended_at IS NULL
  ORDER BY created_at DESC LIMIT 1`;

const SESSION_SQL = `INSERT INTO sessions (id, profile, source, chat_key, title, title_source,
    metadata, created_at, updated_at, last_activity_at)
  VALUES ($1, 'default', $2, $3, $4, $5, $6, $7, $7, $7)`;

/**
 * The gateway's own group commits, in message id order: every message of
 * one appendMany call carries that call's one timestamp (Messages.appendMany
 * prepares each with the same `now`), so a batch is a run of rows sharing
 * created_at. Two batches in one millisecond count as one. Replayed as they
 * ran, a batch holds what the gateway's did: a turn's user message and its
 * reply never in one batch (the client sends its next message after the
 * reply's commit), so each lease is written by one batch and deleted by a
 * later one, as hearth's are, never netted out inside a batch.
 */
function gatewayBatches(rows) {
  const batches = [];
  for (const r of rows) {
    const last = batches.at(-1);
    if (last && last[0].created_at === r.created_at) last.push(r);
    else batches.push([r]);
  }
  return batches;
}

/** A lease value of the shape and size hearth writes (src/turn/leases.ts). */
const leaseValue = () =>
  JSON.stringify({
    holder: { pid: process.pid, start: 123456789 },
    kind: "gateway",
    turnId: randomUUID(),
    expiresAt: Date.now() + 120_000,
    host: "bench-host-0123456789abcdef",
    owner: `gateway:${process.pid}:${randomUUID()}`,
  });

/** The batches' statement parameters, built before anything is timed. */
function plan(rows, fresh) {
  const batches = [];
  const born = new Set();
  for (const part of gatewayBatches(rows)) {
    const meta = new Map(); // key -> value (taken) or null (released), net over the batch
    for (const r of part) meta.set(`turn:${r.session_id}`, r.role === "user" ? leaseValue() : null);
    const set = [...meta].filter(([, v]) => v !== null);
    batches.push({
      // The first message of a chat the window started: its lookup, and its session created here.
      reads: part
        .filter((r) => r.role === "user" && fresh.has(r.session_id) && !born.has(r.session_id))
        .map((r) => {
          born.add(r.session_id);
          return { chat: [r.source, r.chat_key], create: fresh.get(r.session_id) };
        }),
      params: [
        part.map((r) => r.session_id),
        part.map((r) => r.role),
        part.map((r) => r.content),
        part.map((r) => Number(r.created_at)),
        part.map((r) => `raw-${r.client_id ?? randomUUID()}`),
        set.map(([k]) => k),
        set.map(([, v]) => v),
        Date.now(),
        [...meta].filter(([, v]) => v === null).map(([k]) => k),
      ],
    });
  }
  return batches;
}

/**
 * Replay the messages the gateway wrote in `url`'s database from `start` to
 * `end` (ms, its timed window) in the gateway's own batches; per message:
 * { statements (no BEGIN/COMMIT), pgssCalls, roundTrips, execMs
 * (pg_stat_statements' execution time), serverCpu (ms), sessions (created
 * in the timing, per message) }.
 */
export async function replayCeiling(url, { name, start, end }) {
  const pool = rawPool(url, 8);
  try {
    const { rows } = await pool.query(
      `SELECT 'raw-' || m.session_id AS session_id, m.role, m.content, m.created_at, m.client_id,
         s.source, 'raw-' || s.chat_key AS chat_key, s.created_at >= $1 AS fresh,
         s.created_at AS session_created,
         'raw-' || s.title AS title, s.title_source, s.metadata
       FROM messages m JOIN sessions s ON s.id = m.session_id
       WHERE m.created_at >= $1 AND m.created_at < $2 ORDER BY m.id`,
      [start, end],
    );
    if (rows.length === 0) throw new Error("the ceiling found no message of the window to replay");
    const fresh = new Map();
    for (const r of rows)
      if (r.fresh)
        fresh.set(r.session_id, [
          r.session_id,
          r.source,
          r.chat_key,
          r.title,
          r.title_source,
          r.metadata,
          r.session_created,
        ]);
    const chats = new Map(rows.filter((r) => !r.fresh).map((r) => [r.session_id, r]));
    // Their last activity before the window, as the gateway's were: each
    // batch moves it (an indexed column, sessions_by_activity), as hearth's
    // does. Stamped at the replay's own time instead, no batch moved it and
    // every session UPDATE was a HOT update, with no index entry to write
    // (pg_walinspect: 0.99 HOT updates per message against hearth's 1.02
    // plain ones and 3.2 more B-tree inserts).
    await pool.query(
      `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
       SELECT id, 'default', source, chat_key, $4, $4, $4
       FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, source, chat_key)`,
      [
        [...chats.keys()],
        [...chats.values()].map((r) => r.source),
        [...chats.values()].map((r) => r.chat_key),
        start - 1,
      ],
    );
    const batches = plan(rows, fresh);
    // Every pooled connection open before the CPU is read.
    await Promise.all(Array.from({ length: 8 }, () => pool.query("SELECT 1")));
    const pids = await backendPids(url);
    const cpu = () => pids.reduce((t, pid) => t + cpuMs(pid), 0);
    const s0 = await admin((c) => statementCounts(c, name));
    const c0 = cpu();
    let queries = 0;
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const b = batches[next++];
        // The batch's turns look up their chats at once, on the pool's 8
        // connections, as the gateway's concurrent clients do on its 8.
        await Promise.all(
          b.reads.map(async ({ chat, create }) => {
            queries++;
            const found = await pool.query({ name: "ceiling_read", text: READ_SQL, values: chat });
            if (found.rowCount !== 0)
              throw new Error("the ceiling's chat lookup found what the gateway's did not");
            queries++;
            await pool.query({
              name: "ceiling_session",
              text: SESSION_SQL,
              values: create,
            });
          }),
        );
        queries++;
        const { rowCount } = await pool.query({
          name: "ceiling_write",
          text: WRITE_SQL,
          values: b.params,
        });
        if (rowCount !== b.params[0].length)
          throw new Error("the ceiling's batch wrote too few rows");
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const c1 = cpu();
    const st = statementDiff(s0, await admin((c) => statementCounts(c, name)));
    const messages = rows.length;
    return {
      messages,
      statements: st.other / messages,
      pgssCalls: st.total / messages,
      roundTrips: queries / messages,
      execMs: st.execMs / messages,
      planMs: st.planMs / messages,
      serverCpu: (c1 - c0) / messages,
      sessions: fresh.size / messages,
    };
  } finally {
    await pool.end();
  }
}

// Workload 17 (in process): hearth on PostgreSQL (openStore({ url }), a
// fresh database per run) against raw `pg` issuing exactly the statements
// hearth issues for the operation, in the same transactions (the ceiling,
// a pg.Pool of the same size), with hearth on SQLite (WAL+FULL) in the
// third column, all interleaved round by round (order rotated):
//   append:  BEGIN; WITH slot AS (UPDATE sessions ... RETURNING) INSERT INTO messages ... RETURNING; COMMIT
//   batch:   BEGIN; (that statement) × 100; COMMIT
//   tail:    SELECT ... WHERE session_id = $1 AND active = 1 ORDER BY ordinal DESC LIMIT $2
//   search:  the WITH q ... ts_rank ... ts_headline statement of src/store/pg/search.ts
// Messages carry no clientId (hearth then takes no extra lock or probe).
import { openStore } from "../../dist/index.js";
import { APPEND_SQL } from "../../dist/store/pg/message-write.js";
import { toTsQuery } from "../../dist/store/pg/search.js";
import { MESSAGE_COLUMNS } from "../../dist/store/rows.js";
import { RANK_WINDOW } from "../../dist/store/search.js";
import { messageList, queries } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { runInterleaved } from "../lib/interleaved.mjs";
import {
  addPgSessions,
  backendCpu,
  bulkFillPg,
  dropPgDatabase,
  freshPgDatabase,
  RAW_APPLICATION_NAME,
  rawPool,
} from "../lib/pg.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { addSessions, bulkFill, newStore, removeDir, tempDir } from "../lib/stores.mjs";

const SESSIONS = 100;
const BATCH = 100;
const TAIL = 200;
const BASELINES = { ceiling: "raw pg, same SQL", naive: "hearth on SQLite (WAL+FULL)" };

/**
 * The counted cost of a call (issue 44): this process's CPU and system
 * calls (the client's; for the SQLite column, the whole store), and the
 * PostgreSQL server's CPU (the backends of hearth's pool, or of the raw
 * pool; none for SQLite).
 */
function pgCostRows(workload, res) {
  return [
    ...costRows({ workload, what: "this process", res, baselines: BASELINES }),
    row({
      workload,
      metric: "PostgreSQL server CPU per call (its backends, /proc)",
      unit: "ms",
      better: "lower",
      hearth: res.hearth.map((r) => r.serverCpuMs),
      ceiling: res.ceiling.map((r) => r.serverCpuMs),
      baselines: BASELINES,
    }),
  ];
}

export const TAIL_SQL = `SELECT session_id, ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND active = 1
       ORDER BY ordinal DESC LIMIT $2`;
export const SEARCH_SQL = `WITH q AS (SELECT to_tsquery('simple', $1) AS q),
     matches AS (
       SELECT m.id, m.session_id, m.ordinal, m.role, m.active, m.created_at, m.content, m.content_tsv
         FROM messages m, q WHERE m.content_tsv @@ q.q AND m.active = 1
         ORDER BY m.id DESC LIMIT ${RANK_WINDOW}
     ),
     ranked AS (
       SELECT matches.*, ts_rank(matches.content_tsv, q.q) AS rank FROM matches, q
        ORDER BY rank DESC, matches.id DESC LIMIT $2
     )
     SELECT r.id, r.session_id, r.ordinal, r.role, r.active, r.created_at,
            ts_headline('simple', r.content, q.q,
              'StartSel=[, StopSel=], MaxWords=12, MinWords=4, MaxFragments=1, FragmentDelimiter=…') AS snippet,
            s.title, s.source, s.chat_key, s.last_activity_at
       FROM ranked r CROSS JOIN q LEFT JOIN sessions s ON s.id = r.session_id
      ORDER BY r.rank DESC, r.id DESC`;

/** One transaction on a pooled connection, as src/store/pg/pool.ts transaction() runs it. */
async function rawTransaction(pool, fn) {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  } finally {
    client.release();
  }
}

/** insertMessage's two statements for a message without clientId or tokens. */
async function rawInsert(client, sessionId, m, now) {
  const { rows } = await client.query(APPEND_SQL, [
    sessionId,
    m.role,
    m.content,
    "text",
    null,
    null,
    null,
    null,
    null,
    now,
    null,
    null,
    0,
  ]);
  return Number(rows[0].id);
}

/** The three variants of one operation; `pg` and `sqlite` are the shared fixtures. */
function variants({ pg, sqlite, fresh, hearthFn, rawFn, sqliteFn }) {
  return [
    {
      name: "hearth",
      async: true,
      setup: async (round, phase) => {
        const store = await openStore({ home: pg.home, url: pg.url });
        return { store, ...(await fresh?.("hearth", round, phase)) };
      },
      fn: hearthFn,
      teardown: (ctx) => ctx.store.close(),
      serverCpu: () => backendCpu(pg.url, "hearth:%"),
    },
    {
      name: "ceiling",
      async: true,
      setup: async (round, phase) => ({
        pool: rawPool(pg.url),
        ...(await fresh?.("ceiling", round, phase)),
      }),
      fn: rawFn,
      teardown: (ctx) => ctx.pool.end(),
      serverCpu: () => backendCpu(pg.url, RAW_APPLICATION_NAME),
    },
    {
      name: "naive",
      async: true,
      // Interleaved rounds run it by itself after the two on PostgreSQL (its fsyncs and checkpoint thread).
      alone: true,
      setup: async (round, phase) => {
        const store = await openStore({ home: sqlite.home });
        return { store, ...(await fresh?.("sqlite", round, phase)) };
      },
      fn: sqliteFn,
      teardown: (ctx) => ctx.store.close(),
    },
  ];
}

async function appendRows({ pg, sqlite, batch, perRound, rounds, warm, log }) {
  const perCall = batch ? BATCH : 1;
  const iterations = perRound / perCall;
  const list = messageList(1700 + (batch ? 1 : 0), perRound);
  const batches = Array.from({ length: iterations }, (_, i) =>
    list.slice(i * perCall, (i + 1) * perCall),
  );
  // Every setup appends to 100 empty sessions of its own (PostgreSQL: one shared database).
  const fresh = async (who, round, phase) => {
    if (who === "sqlite")
      return { ids: addSessions(sqlite.path, SESSIONS, `a${batch ? "b" : ""}${round}${phase}`) };
    return {
      ids: await addPgSessions(pg.admin, SESSIONS, `${who}${batch ? "b" : ""}${round}${phase}`),
    };
  };
  const sid = (ctx, i) => ctx.ids[i % SESSIONS];
  const vs = variants({
    pg,
    sqlite,
    fresh,
    hearthFn: batch
      ? (ctx, i) => ctx.store.messages.appendBatch(sid(ctx, i), batches[i])
      : (ctx, i) => ctx.store.messages.append(sid(ctx, i), list[i]),
    rawFn: batch
      ? (ctx, i) =>
          rawTransaction(ctx.pool, async (client) => {
            const now = Date.now();
            const ids = [];
            for (const m of batches[i]) ids.push(await rawInsert(client, sid(ctx, i), m, now));
            return ids;
          })
      : (ctx, i) =>
          rawTransaction(ctx.pool, (client) => rawInsert(client, sid(ctx, i), list[i], Date.now())),
    sqliteFn: batch
      ? (ctx, i) => ctx.store.messages.appendBatch(sid(ctx, i), batches[i])
      : (ctx, i) => ctx.store.messages.append(sid(ctx, i), list[i]),
  });
  const warmup = warm ? Math.max(3, Math.min(50, Math.floor(iterations / 20))) : 0;
  // In turns of a tenth of a round each, on the one server (bench/lib/interleaved.mjs).
  const block = Math.max(1, Math.ceil(iterations / 10));
  const res = await runInterleaved({
    rounds,
    iterations,
    block,
    warmup,
    variants: vs,
    log,
  });
  const rate = (name) => res[name].map((r) => (perCall * 1000) / r.meanMs);
  const workload = batch
    ? "17. postgres: batch append (100/call)"
    : "17. postgres: append (1 message/txn)";
  return [
    row({
      workload,
      metric: "messages/s",
      unit: "msg/s",
      better: "higher",
      hearth: rate("hearth"),
      ceiling: rate("ceiling"),
      naive: rate("naive"),
      baselines: BASELINES,
      target: { text: ">= 0.9× raw pg", kind: "ceiling", op: ">=", value: 0.9, basis: "median" },
    }),
    row({
      workload,
      metric: "p50 per call",
      unit: "ms",
      better: "lower",
      hearth: res.hearth.map((r) => r.p50),
      ceiling: res.ceiling.map((r) => r.p50),
      naive: res.naive.map((r) => r.p50),
      baselines: BASELINES,
    }),
    ...pgCostRows(workload, res),
  ];
}

async function readRows({ pg, sqlite, sizes, rounds, log }) {
  const warmup = sizes.warmup ? 5 : 0;
  const tailId = pg.tailId;
  const tail = await runRounds({
    rounds,
    iterations: sizes.pgTailCalls,
    warmup,
    log,
    variants: variants({
      pg,
      sqlite,
      hearthFn: (ctx) => ctx.store.messages.tail(tailId, TAIL),
      rawFn: async (ctx) => (await ctx.pool.query(TAIL_SQL, [tailId, TAIL])).rows.reverse(),
      sqliteFn: (ctx) => ctx.store.messages.tail(tailId, TAIL),
    }),
  });
  const count = sizes.pgSearchQueries;
  const list = queries(1766, count);
  const tsq = list.map(toTsQuery);
  let hits = 0;
  const search = await runRounds({
    rounds,
    iterations: count,
    warmup,
    log,
    variants: variants({
      pg,
      sqlite,
      hearthFn: async (ctx, i) => {
        hits += (await ctx.store.search(list[i % count])).length;
      },
      rawFn: (ctx, i) => ctx.pool.query(SEARCH_SQL, [tsq[i % count], 20]),
      sqliteFn: (ctx, i) => ctx.store.search(list[i % count]),
    }),
  });
  if (hits === 0) throw new Error("postgres search found nothing: the corpus or queries are wrong");
  const p50 = (res, name) => res[name].map((r) => r.p50);
  const judged = (res, workload) =>
    row({
      workload,
      metric: "p50 per call",
      unit: "ms",
      better: "lower",
      hearth: p50(res, "hearth"),
      ceiling: p50(res, "ceiling"),
      naive: p50(res, "naive"),
      baselines: BASELINES,
      target: {
        text: "<= 1/0.9× raw pg",
        kind: "ceiling",
        op: "<=",
        value: 1 / 0.9,
        basis: "median",
      },
    });
  const corpus = sizes.pgSearchMessages.toLocaleString("en-US");
  const tailWorkload = `17. postgres: tail read (last ${TAIL} of ${sizes.pgTailMessages.toLocaleString("en-US")})`;
  const searchWorkload = `17. postgres: search (${corpus} messages, tsvector)`;
  return [
    judged(tail, tailWorkload),
    ...pgCostRows(tailWorkload, tail),
    judged(search, searchWorkload),
    ...pgCostRows(searchWorkload, search),
  ];
}

/** The fixtures: one PostgreSQL database and one SQLite store holding the same corpus. */
async function fixtures(sizes, log) {
  const url = await freshPgDatabase();
  const home = tempDir("pg-bench");
  const first = await openStore({ home, url }); // creates the schema
  await first.close();
  const admin = rawPool(url, 2);
  const corpus = messageList(1717, sizes.pgSearchMessages);
  const tailList = messageList(1718, sizes.pgTailMessages);
  log(
    `  filling PostgreSQL and SQLite: ${sizes.pgTailMessages} + ${sizes.pgSearchMessages} messages`,
  );
  const [tailId] = await bulkFillPg(admin, { list: tailList, sessions: 1 });
  await bulkFillPg(admin, { list: corpus, sessions: SESSIONS, firstSession: 1 });
  const sqlite = await newStore("pg-bench-sqlite", "full");
  bulkFill(sqlite.path, { total: sizes.pgTailMessages, sessions: 1, seed: 1718 });
  bulkFill(sqlite.path, {
    total: sizes.pgSearchMessages,
    sessions: SESSIONS,
    seed: 1717,
    firstSession: 1,
  });
  return {
    pg: { url, home, admin, tailId },
    sqlite,
    async close() {
      await admin.end();
      await dropPgDatabase(url);
      removeDir(home);
      removeDir(sqlite.home);
    },
  };
}

export async function postgresWorkload({ sizes, rounds, log }) {
  log(
    `17. postgres: append ${sizes.pgAppends}/round, batch ${sizes.pgBatchTotal}/round, tail ${sizes.pgTailCalls}, search ${sizes.pgSearchQueries} × ${rounds} rounds`,
  );
  const f = await fixtures(sizes, log);
  try {
    const common = { pg: f.pg, sqlite: f.sqlite, rounds, warm: sizes.warmup, log };
    return [
      ...(await appendRows({ ...common, batch: false, perRound: sizes.pgAppends })),
      ...(await appendRows({ ...common, batch: true, perRound: sizes.pgBatchTotal })),
      ...(await readRows({ ...common, sizes })),
    ];
  } finally {
    await f.close();
  }
}

// Workload 18 (many hosts, one store): what a message costs on PostgreSQL,
// the figures that predict how throughput scales with gateway hosts (a
// 2-CPU machine cannot measure that scaling as throughput). One real
// `hearth gateway run` (group commit on) on a fresh database of the bench's
// own PostgreSQL server (bench/lib/pg-embedded.mjs: pg_stat_statements
// loaded), 64 clients over HTTP as in workload 17; per acknowledged message:
//   statements  pg_stat_statements calls in the gateway's database over the
//               window, BEGIN/COMMIT/ROLLBACK/SAVEPOINT left out
//   round trips the gateway's Client#query calls, counted in the gateway
//               (bench/workers/pg-count-queries.mjs, preloaded)
//   server CPU  the database's backends (utime + stime of /proc/<pid>/stat)
//   gateway CPU the gateway process; beside it the same gateway on SQLite
// The ceiling (bench/lib/pg-ceiling.mjs) replays the rows that window wrote
// with raw pg on the same server, in the fewest round trips: per chat the
// window started one chat lookup and one INSERT of its session (title and
// metadata as the gateway left them; a turn on a chat seen before reads
// nothing, as the gateway remembers it), per group commit (the gateway's
// own batches) one statement writing the batch's messages, session counters
// and meta keys.
// $HEARTH_BENCH_BASE_DIST (e.g. /work/main/dist): a third variant, "base",
// that build's gateway measured the same way (its own ceiling replay),
// rotated with the others round by round; its rows say "base build".
import { pathToFileURL } from "node:url";
import { startServer } from "../lib/gateway-servers.mjs";
import { admin, backendPids, dropPgDatabase, freshPgDatabase, usePgServer } from "../lib/pg.mjs";
import { replayCeiling } from "../lib/pg-ceiling.mjs";
import { startStatsPg, statementCounts, statementDiff } from "../lib/pg-embedded.mjs";
import { row } from "../lib/rows.mjs";
import { rotate } from "../lib/stats.mjs";
import { startClients, warm, window } from "./postgres-gateway.mjs";

const BASE = process.env.HEARTH_BENCH_BASE_DIST;
const VARIANTS = BASE ? ["pg", "base", "sqlite"] : ["pg", "sqlite"];
const PRELOAD = new URL("../workers/pg-count-queries.mjs", import.meta.url);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function start(key) {
  if (key === "sqlite") {
    const s = await startServer({ synchronous: "full", groupCommit: true });
    return { servers: [s], backends: async () => [], stop: () => s.stop() };
  }
  const url = await freshPgDatabase();
  const s = await startServer({
    synchronous: "full",
    groupCommit: true,
    config: { store: { url } },
    nodeArgs: ["--import", pathToFileURL(PRELOAD.pathname).href],
    ...(key === "base" ? { cli: `${BASE}/cli/main.js`, env: { HEARTH_BENCH_PG_FROM: BASE } } : {}),
  });
  return {
    url,
    servers: [s],
    backends: () => backendPids(url),
    stop: () => s.stop(), // the database is dropped after the ceiling's replay
  };
}

/** The gateway's query count so far (its preload answers SIGUSR2). */
async function queriesSent(server) {
  const sent = Date.now();
  const answer = server.child.line((l) => l.event === "bench.pgq" && l.at >= sent);
  process.kill(server.pid, "SIGUSR2");
  return (await answer).queries;
}

export async function pgCostWorkload({ sizes, rounds, log }) {
  const n = sizes.pgGatewayClients;
  // Windows of their own length: per-message figures need many messages, and
  // 400 ms of 64 clients on this loaded 2-CPU machine held none on PostgreSQL.
  const { pgCostMs: ms, pgCostWarmMs: warmMs, gatewaySettleMs: settleMs } = sizes;
  log(`18. postgres cost per message: ${n} clients, ${ms} ms windows × ${rounds} rounds`);
  const pgServer = await startStatsPg();
  usePgServer(pgServer.url);
  const clients = startClients(1800);
  const res = { pg: [], sqlite: [], raw: [], base: [], rawBase: [] };
  const failures = [];
  try {
    await warm(clients, { n, warmMs, ms });
    for (let round = 0; round < rounds; round++) {
      const line = [];
      for (const key of rotate(VARIANTS, round)) {
        const v = await start(key);
        const name = v.url && new URL(v.url).pathname.slice(1);
        let w;
        try {
          await sleep(settleMs);
          const probe = v.url
            ? async () => ({
                statements: await admin((c) => statementCounts(c, name)),
                queries: await queriesSent(v.servers[0]),
              })
            : undefined;
          w = await window(clients, v, { n, tag: `pc${round}${key}`, warmMs, ms, probe });
          if (w.errors) failures.push(`${key}: ${w.errors} (${w.lastError})`);
        } finally {
          await v.stop();
        }
        const messages = 2 * w.turns; // a turn acknowledges two messages
        if (messages === 0)
          throw new Error(`${key}: no turn was acknowledged in the ${ms} ms window`);
        const out = {
          msgPerSec: w.msgPerSec,
          meanBatch: w.meanBatch,
          gatewayCpu: w.cpuPerTurn / 2,
          serverCpu: w.pgCpuPerTurn / 2,
        };
        if (v.url) {
          const [p0, p1] = w.probes;
          const st = statementDiff(p0.statements, p1.statements);
          out.statements = st.other / messages;
          out.pgssCalls = st.total / messages;
          out.roundTrips = (p1.queries - p0.queries) / messages;
          out.execMs = st.execMs / messages;
          out.planMs = st.planMs / messages;
          out.top = st.top.map(([q, c, t, pl]) => [
            q.replace(/\s+/g, " "),
            c / messages,
            t / messages,
            pl / messages,
          ]);
          try {
            const raw = await replayCeiling(v.url, {
              name,
              start: w.start,
              end: w.end,
            });
            res[key === "base" ? "rawBase" : "raw"].push(raw);
            line.push(
              `raw (${key}): ${raw.statements.toFixed(2)} stmt, ${raw.roundTrips.toFixed(2)} rt, ${raw.serverCpu.toFixed(3)} ms/msg, ${raw.sessions.toFixed(4)} new sessions/msg`,
            );
          } finally {
            await dropPgDatabase(v.url);
          }
          log(
            `  ${key} per message: calls, execution ms, planning ms (pg_stat_statements), statement:`,
          );
          for (const [q, c, t, pl] of out.top)
            log(`    ${c.toFixed(4)}  ${t.toFixed(4)}  ${pl.toFixed(4)}  ${q.slice(0, 140)}`);
        }
        res[key].push(out);
        line.unshift(
          `${key} ${Math.round(out.msgPerSec)} msg/s (batch ${out.meanBatch.toFixed(1)}), gateway ${out.gatewayCpu.toFixed(3)} ms/msg` +
            (v.url
              ? `, server ${out.serverCpu.toFixed(3)} ms/msg, ${out.statements.toFixed(2)} stmt, ${out.roundTrips.toFixed(2)} rt`
              : ""),
        );
      }
      log(`  round ${round + 1}/${rounds}: ${line.join("; ")}`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await pgServer.stop();
  }
  const all = rows(res, { n, failures, sizes });
  if (BASE) {
    const base = { ...res, pg: res.base, raw: res.rawBase };
    for (const r of rows(base, { n, failures }).slice(0, 6))
      all.push({ ...r, metric: `${r.metric} — base build (${BASE})` });
  }
  return all;
}

/** [text, calls, execution ms, planning ms] per message, each the mean over the rounds, by calls. */
function byStatement(rounds) {
  const sum = new Map();
  for (const r of rounds)
    for (const [q, c, t, pl] of r.top) {
      const was = sum.get(q) ?? [0, 0, 0];
      const n = rounds.length;
      sum.set(q, [was[0] + c / n, was[1] + t / n, was[2] + pl / n]);
    }
  return [...sum].map(([q, [c, t, pl]]) => [q, c, t, pl]).sort((a, b) => b[1] - a[1]);
}

function rows(res, { n, failures }) {
  const pick = (key, k) => res[key].map((w) => w[k]);
  const workload = `18. postgres: cost per message (${n} clients, one gateway)`;
  const note = failures.length ? `failed requests: ${failures.join("; ")}` : undefined;
  const raw = { ceiling: "raw pg replaying the same rows in the fewest round trips" };
  return [
    {
      ...row({
        workload,
        metric: "statements per message (BEGIN/COMMIT not counted)",
        unit: "stmt",
        better: "lower",
        hearth: pick("pg", "statements"),
        ceiling: pick("raw", "statements"),
        baselines: raw,
        target: { text: "<= 2", kind: "absolute", op: "<=", value: 2, basis: "median" },
        note: `pg_stat_statements (track=top); with BEGIN/COMMIT, per round: ${pick(
          "pg",
          "pgssCalls",
        )
          .map((x) => x.toFixed(2))
          .join(", ")}`,
      }),
      // The gateway's statements by text, per message, the mean over rounds (docs' breakdown).
      byStatement: byStatement(res.pg),
    },
    row({
      workload,
      metric: "round trips per message",
      unit: "rt",
      better: "lower",
      hearth: pick("pg", "roundTrips"),
      ceiling: pick("raw", "roundTrips"),
      baselines: raw,
      target: { text: "<= 1", kind: "absolute", op: "<=", value: 1, basis: "median" },
      note: "the gateway's Client#query calls (bench/workers/pg-count-queries.mjs)",
    }),
    row({
      workload,
      metric: "PostgreSQL server CPU per message",
      unit: "ms",
      better: "lower",
      hearth: pick("pg", "serverCpu"),
      ceiling: pick("raw", "serverCpu"),
      baselines: raw,
      target: { text: "<= 1.2× raw pg", kind: "ceiling", op: "<=", value: 1.2, basis: "median" },
    }),
    row({
      workload,
      metric: "statements' execution time per message (pg_stat_statements)",
      unit: "ms",
      better: "lower",
      hearth: pick("pg", "execMs"),
      ceiling: pick("raw", "execMs"),
      baselines: raw,
      note: "total_exec_time: executing only (no parse, plan, protocol or commit); the rest of the server CPU is per round trip",
    }),
    row({
      workload,
      metric: "statements' planning time per message (pg_stat_statements)",
      unit: "ms",
      better: "lower",
      hearth: pick("pg", "planMs"),
      ceiling: pick("raw", "planMs"),
      baselines: raw,
      note: "total_plan_time (track_planning = on): every statement is unnamed, planned at each call",
    }),
    row({
      workload,
      metric: "gateway CPU per message",
      unit: "ms",
      better: "lower",
      hearth: pick("pg", "gatewayCpu"),
      naive: pick("sqlite", "gatewayCpu"),
      baselines: { naive: "the same gateway on SQLite (WAL+FULL)" },
      target: { text: "<= 1.2× on SQLite", kind: "naive", op: "<=", value: 1.2, basis: "median" },
    }),
    row({
      workload,
      metric: "messages per commit (mean)",
      unit: "msg",
      better: "higher",
      hearth: pick("pg", "meanBatch"),
      naive: pick("sqlite", "meanBatch"),
      baselines: { naive: "on SQLite" },
    }),
    row({
      workload,
      metric: "acked messages/s",
      unit: "msg/s",
      better: "higher",
      hearth: pick("pg", "msgPerSec"),
      naive: pick("sqlite", "msgPerSec"),
      baselines: { naive: "on SQLite" },
      note,
    }),
  ];
}

// Workload 17 (gateways): group commit at 64 clients on PostgreSQL. Real
// `hearth gateway run` processes (group commit on) driven over HTTP by the
// client processes of workload 3, acknowledged messages per second, three
// variants interleaved round by round (order rotated), each on a fresh
// database or home:
//   one:    one gateway, store.url on a fresh PostgreSQL database
//   two:    two gateways (two homes, one fresh database); client process 0
//           posts to the first, process 1 to the second (32 clients each)
//   sqlite: one gateway on SQLite (WAL+FULL), for the figure beside
import { commitBatches, cpuMs, startServer } from "../lib/gateway-servers.mjs";
import { backendPids, dropPgDatabase, freshPgDatabase } from "../lib/pg.mjs";
import { startChild } from "../lib/procs.mjs";
import { machineBusy, machineTicks } from "../lib/quiet-machine.mjs";
import { row } from "../lib/rows.mjs";
import { quantile, rotate } from "../lib/stats.mjs";
import { TURNS_PER_CHAT, warmClients } from "./gateway.mjs";

const CLIENT_PROCESSES = 2;
const VARIANTS = ["one", "two", "sqlite"];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves with fn() once Date.now() reaches `t`. */
const cpuMsOr0 = (pid) => {
  try {
    return cpuMs(pid);
  } catch {
    return 0; // a backend that ended (the pool let it go)
  }
};
const atTime = (t, fn) =>
  new Promise((resolve) => setTimeout(() => resolve(fn()), Math.max(0, t - Date.now())));

async function ask(client, op, args) {
  client.send({ op, ...args });
  const answer = await client.line((l) => l.op === op && l.seq === args.seq);
  if (!answer.ok) throw new Error(`gateway client ${op}: ${answer.error.message}`);
  return answer.result;
}

/** Start the variant's gateways; resolves with { servers, stop() }. */
async function start(key) {
  if (key === "sqlite") {
    const s = await startServer({ synchronous: "full", groupCommit: true });
    return { servers: [s], backends: async () => [], stop: () => s.stop() };
  }
  const url = await freshPgDatabase();
  const spec = { synchronous: "full", groupCommit: true, config: { store: { url } } };
  const servers = [];
  try {
    // One after the other: the first creates the schema under its advisory lock.
    for (let i = 0; i < (key === "two" ? 2 : 1); i++) servers.push(await startServer(spec));
  } catch (err) {
    for (const s of servers) await s.stop().catch(() => {});
    await dropPgDatabase(url);
    throw err;
  }
  return {
    servers,
    backends: () => backendPids(url),
    async stop() {
      for (const s of servers) await s.stop();
      await dropPgDatabase(url);
    },
  };
}

/**
 * One timed window: client process p posts to servers[p % servers.length].
 * probe (optional): an async function run at the window's start and at its
 * end; the window's `probes` are its two answers (workload 18 counts
 * statements and round trips with it).
 */
export async function window(clients, { servers, backends }, { n, tag, warmMs, ms, probe }) {
  const parts = clients.map((client, p) => ({
    client,
    address: servers[p % servers.length].address,
    list: Array.from({ length: n }, (_, c) => c).filter((c) => c % CLIENT_PROCESSES === p),
  }));
  const seq = () => `${tag}-${Math.random()}`;
  await Promise.all(
    parts.map((x) =>
      ask(x.client, "prepare", { seq: seq(), address: x.address, clients: x.list, tag }),
    ),
  );
  const before = await Promise.all(servers.map((s) => commitBatches(s.address)));
  const at = Date.now() + warmMs;
  const pids = await backends();
  const sumCpu = (list) => list.reduce((t, pid) => t + cpuMsOr0(pid), 0);
  const cpu = () => ({
    gateways: sumCpu(servers.map((s) => s.pid)),
    server: sumCpu(pids),
    machine: machineTicks(),
  });
  const cpuStart = atTime(at, cpu);
  const cpuEnd = atTime(at + ms, cpu);
  const probes = probe ? [atTime(at, probe), atTime(at + ms, probe)] : [];
  const results = await Promise.all(
    parts.map((x) =>
      ask(x.client, "run", { seq: seq(), address: x.address, clients: x.list, tag, at, ms }),
    ),
  );
  const after = await Promise.all(servers.map((s) => commitBatches(s.address)));
  const sum = (list, k) => list.reduce((t, b) => t + b[k], 0);
  const turns = results.reduce((s, r) => s + r.turns, 0);
  const [c0, c1] = await Promise.all([cpuStart, cpuEnd]);
  return {
    turns,
    start: at, // the timed window, ms since the epoch (workload 18's ceiling replays its rows)
    end: at + ms,
    probes: await Promise.all(probes),
    cpuPerTurn: (c1.gateways - c0.gateways) / turns, // all gateways, per acknowledged turn
    pgCpuPerTurn: (c1.server - c0.server) / turns, // the database's backends of this run
    // Every process of the machine (clients, gateways, the database): a
    // variant that keeps the machine busy has no core left for a second gateway.
    machineBusy: machineBusy(c0.machine, c1.machine),
    msgPerSec: (2 * turns) / (ms / 1000), // a turn acknowledges two messages
    p99: quantile(
      results.flatMap((r) => r.latencies),
      0.99,
    ),
    meanBatch:
      (sum(after, "sum") - sum(before, "sum")) / (sum(after, "count") - sum(before, "count")),
    errors: results.reduce((s, r) => s + r.errors, 0),
    lastError: results.map((r) => r.lastError).find(Boolean),
  };
}

/** Workload 3's client processes (seeds seed, seed + 1, …); stop them with c.stop(). */
export const startClients = (seed) =>
  Array.from({ length: CLIENT_PROCESSES }, (_, p) =>
    startChild("gateway-client.mjs", { seed: seed + p, turnsPerChat: TURNS_PER_CHAT }),
  );

/** Wait for the client processes, then warm them at `n` clients (workload 3's warm-up). */
export async function warm(clients, { n, warmMs, ms }) {
  await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
  await warmClients(clients, { counts: [n], warmMs, ms });
}

export async function postgresGatewayWorkload({ sizes, rounds, log }) {
  const n = sizes.pgGatewayClients;
  const { pgGatewayMs: ms, gatewayWarmMs: warmMs, gatewaySettleMs: settleMs } = sizes;
  log(`17. postgres gateways: ${n} clients, ${ms} ms windows × ${rounds} rounds`);
  const clients = startClients(1700);
  const res = Object.fromEntries(VARIANTS.map((k) => [k, []]));
  const failures = [];
  try {
    await warm(clients, { n, warmMs, ms });
    for (let round = 0; round < rounds; round++) {
      const line = [];
      for (const key of rotate(VARIANTS, round)) {
        const v = await start(key);
        try {
          await sleep(settleMs);
          const w = await window(clients, v, { n, tag: `pg${round}${key}`, warmMs, ms });
          res[key].push(w);
          if (w.errors) failures.push(`${key}: ${w.errors} (${w.lastError})`);
          line.push(`${key} ${Math.round(w.msgPerSec)} (batch ${w.meanBatch.toFixed(1)})`);
        } finally {
          await v.stop();
        }
      }
      log(`  round ${round + 1}/${rounds}: acked msg/s ${line.join("; ")}`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
  }
  if (failures.length) log(`  failed requests: ${failures.join("; ")}`);
  const pick = (key, k) => res[key].map((w) => w[k]);
  const workload = `17. postgres: gateway group commit (${n} clients)`;
  const note = failures.length ? `failed requests: ${failures.join("; ")}` : undefined;
  return [
    row({
      workload,
      metric: "one gateway: acked messages/s",
      unit: "msg/s",
      better: "higher",
      hearth: pick("one", "msgPerSec"),
      naive: pick("sqlite", "msgPerSec"),
      baselines: { naive: "one gateway on SQLite (WAL+FULL)" },
      note,
    }),
    row({
      workload,
      metric: "two gateways, one database: acked messages/s",
      unit: "msg/s",
      better: "higher",
      hearth: pick("two", "msgPerSec"),
      ceiling: pick("one", "msgPerSec"),
      baselines: { ceiling: "one gateway on PostgreSQL (the ratio is two/one)" },
      target: {
        text: ">= 1.6× one gateway",
        kind: "ceiling",
        op: ">=",
        value: 1.6,
        basis: "median",
      },
      note,
    }),
    row({
      workload,
      metric: "messages per commit (mean)",
      unit: "msg",
      better: "higher",
      hearth: pick("one", "meanBatch"),
      ceiling: pick("two", "meanBatch"),
      naive: pick("sqlite", "meanBatch"),
      baselines: { ceiling: "two gateways (per gateway)", naive: "one gateway on SQLite" },
    }),
    row({
      workload,
      metric: "gateway CPU per turn (all gateways)",
      unit: "ms",
      better: "lower",
      hearth: pick("one", "cpuPerTurn"),
      ceiling: pick("two", "cpuPerTurn"),
      naive: pick("sqlite", "cpuPerTurn"),
      baselines: { ceiling: "two gateways", naive: "one gateway on SQLite" },
    }),
    row({
      workload,
      metric: "PostgreSQL backends' CPU per turn",
      unit: "ms",
      better: "lower",
      hearth: pick("one", "pgCpuPerTurn"),
      ceiling: pick("two", "pgCpuPerTurn"),
      baselines: { ceiling: "two gateways" },
    }),
    row({
      workload,
      metric: "machine CPU busy (all processes, /proc/stat)",
      unit: "%",
      better: "lower",
      hearth: pick("one", "machineBusy").map((f) => 100 * f),
      ceiling: pick("two", "machineBusy").map((f) => 100 * f),
      naive: pick("sqlite", "machineBusy").map((f) => 100 * f),
      baselines: { ceiling: "two gateways", naive: "one gateway on SQLite" },
    }),
    row({
      workload,
      metric: "p99 turn",
      unit: "ms",
      better: "lower",
      hearth: pick("one", "p99"),
      ceiling: pick("two", "p99"),
      naive: pick("sqlite", "p99"),
      baselines: { ceiling: "two gateways", naive: "one gateway on SQLite" },
    }),
  ];
}

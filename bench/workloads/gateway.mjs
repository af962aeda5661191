// Workloads 3 and 8: a real `hearth gateway run` process on loopback with
// the echo responder, N concurrent HTTP clients (each its own chat) in two
// client processes. Variants, interleaved round by round on fresh homes:
// group commit on at WAL+FULL and WAL+NORMAL (hearth), the same gateway with
// gateway.groupCommit false (the "naive" column), the fair ceiling at each
// level (the "ceiling" column: bench/workers/gateway-sql-ceiling.mjs, fastify
// and raw better-sqlite3 doing a turn's SQL in the same group commits), and
// the gateway's own HTTP ceiling (the same server with a no-op store: how
// fast HTTP alone goes, one row of its own), and the fair ceiling with its
// writer connection in a worker thread (the prototype of issue 15: rows of
// its own).
// Workload 8 is the gateway's resident set size: idle after start and a
// settle, and the largest 100 ms sample during the largest client count.
import { commitBatches, cpuMs, rssMB, rssSampler, startServer } from "../lib/gateway-servers.mjs";
import { startChild } from "../lib/procs.mjs";
import { machineBusy, machineTicks } from "../lib/quiet-machine.mjs";
import { quantile, rotate } from "../lib/stats.mjs";
import { buildRows } from "./gateway-rows.mjs";

const CLIENT_PROCESSES = 2;
/** A client moves to a fresh chat of its own after this many turns (transcripts stay <= 50 messages). */
export const TURNS_PER_CHAT = 25;
const VARIANTS = [
  { key: "full", synchronous: "full", groupCommit: true },
  { key: "fullOff", synchronous: "full", groupCommit: false },
  // One transaction and one fsync of its own per message: group commit off,
  // and SQLite's fsync inside every commit (durability.syncOffLoop false),
  // so concurrent commits do not share fsyncs on the pool either.
  {
    key: "fullOneSync",
    synchronous: "full",
    groupCommit: false,
    config: { durability: { synchronous: "full", syncOffLoop: false } },
  },
  { key: "normal", synchronous: "normal", groupCommit: true },
  { key: "normalOff", synchronous: "normal", groupCommit: false },
  { key: "sqlFull", sqlCeiling: true, synchronous: "full" },
  { key: "sqlNormal", sqlCeiling: true, synchronous: "normal" },
  // The writer-thread prototype of issue 15: the fair ceiling with its writer in a worker thread.
  { key: "sqlFullThread", sqlCeiling: true, synchronous: "full", writerThread: true },
  { key: "http", ceiling: true },
];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Clients 0…n-1 dealt round-robin over the client processes. */
const deal = (n) =>
  Array.from({ length: CLIENT_PROCESSES }, (_, p) =>
    Array.from({ length: n }, (_, c) => c).filter((c) => c % CLIENT_PROCESSES === p),
  );

/** A command and its answer (matched by `seq`: ops repeat, and past lines are kept). */
async function ask(client, op, args) {
  client.send({ op, ...args });
  const answer = await client.line((l) => l.op === op && l.seq === args.seq);
  if (!answer.ok) throw new Error(`gateway client ${op}: ${answer.error.message}`);
  return answer.result;
}

/** Resolves with fn() once Date.now() reaches `t`. */
const atTime = (t, fn) =>
  new Promise((resolve) => setTimeout(() => resolve(fn()), Math.max(0, t - Date.now())));

function pooledShare(before, after) {
  const pool = after.pool - before.pool;
  const all = pool + after.loop - before.loop;
  return all > 0 ? pool / all : undefined;
}

function fsyncsPerMessage(before, after) {
  if (after.fsyncs !== undefined && before.fsyncs !== undefined) {
    const acked = after.acked - before.acked;
    return acked > 0 ? (after.fsyncs - before.fsyncs) / acked : undefined;
  }
  const messages = after.sum - before.sum;
  return messages > 0 ? (after.count - before.count) / messages : undefined;
}

function commitsPerMessage(before, after) {
  const acked = after.acked - before.acked;
  const all = (c) => c.commits.loop + c.commits.pool;
  return acked > 0 && all(after) > 0 ? (all(after) - all(before)) / acked : undefined;
}

/** One timed window of `n` clients against `address` (the gateway `pid`). */
export async function measureWindow(
  clients,
  { address, pid, n, tag, warmMs, ms, sample, batches },
) {
  const parts = deal(n)
    .map((list, p) => ({ client: clients[p], list }))
    .filter((x) => x.list.length > 0);
  const seq = () => `${tag}-${Math.random()}`;
  await Promise.all(
    parts.map((x) => ask(x.client, "prepare", { seq: seq(), address, clients: x.list, tag })),
  );
  const before = batches ? await commitBatches(address) : undefined;
  const at = Date.now() + warmMs;
  const cpu = () => ({
    server: cpuMs(pid),
    clients: parts.reduce((s, x) => s + cpuMs(x.client.pid), 0),
    machine: machineTicks(),
  });
  const cpuStart = atTime(at, cpu);
  const cpuEnd = atTime(at + ms, cpu);
  const sampler = sample ? rssSampler(pid) : undefined;
  const results = await Promise.all(
    parts.map((x) => ask(x.client, "run", { seq: seq(), address, clients: x.list, tag, at, ms })),
  );
  const peakMB = sampler?.stop();
  const [c0, c1] = await Promise.all([cpuStart, cpuEnd]);
  const after = batches ? await commitBatches(address) : undefined;
  const turns = results.reduce((s, r) => s + r.turns, 0);
  const latencies = results.flatMap((r) => r.latencies);
  return {
    // Every turn acknowledges two messages: the inbound one and the reply.
    msgPerSec: (2 * turns) / (ms / 1000),
    p99: quantile(latencies, 0.99),
    cpuPerTurn: (c1.server - c0.server) / turns,
    clientCpuPerTurn: (c1.clients - c0.clients) / turns,
    // Every process of the machine (clients, gateway, a reader beside it), 0–1.
    machineBusy: machineBusy(c0.machine, c1.machine),
    // Messages per commit over warm-up and window (and the turns still in flight at its end).
    meanBatch:
      after && after.count > before.count
        ? (after.sum - before.sum) / (after.count - before.count)
        : undefined,
    // WAL fsyncs per acknowledged message over the same span, counted: the
    // store's own count (hearth_wal_fsyncs_total), and the raw SQL
    // ceiling's one per commit (batches and new sessions: each fsyncs inside itself at FULL).
    fsyncsPerMessage: after ? fsyncsPerMessage(before, after) : undefined,
    // Every write-path commit of the store per acknowledged message (group commits, new sessions, titles).
    commitsPerMessage: after ? commitsPerMessage(before, after) : undefined,
    // The store's commits over the same span whose fsync left the loop (shared on the pool), 0–1.
    pooledShare: after ? pooledShare(before.commits, after.commits) : undefined,
    errors: results.reduce((s, r) => s + r.errors, 0),
    lastError: results.map((r) => r.lastError).find(Boolean),
    peakMB,
  };
}

/**
 * One untimed pass of every client count against the HTTP ceiling (no
 * store), before round 1. The client processes are shared by every variant
 * and start cold; without it the first variant of round 1 (always hearth,
 * the rotation starts there) met clients still warming up: 6,145 msg/s at
 * 64 clients against 7,209-7,468 in rounds 2-5 of one run.
 */
export async function warmClients(clients, { counts, warmMs, ms }) {
  const server = await startServer({ ceiling: true });
  try {
    for (const n of counts) {
      await measureWindow(clients, { ...server, n, tag: `warm-n${n}`, warmMs, ms });
    }
  } finally {
    await server.stop();
  }
}

export async function gatewayWorkload({ sizes, rounds, log }) {
  const counts = sizes.gatewayClients;
  const top = Math.max(...counts);
  const { gatewayMs: ms, gatewayWarmMs: warmMs, gatewaySettleMs: settleMs } = sizes;
  log(
    `3/8. gateway: ${counts.join(", ")} clients, ${ms} ms windows (after ${warmMs} ms warm-up) × ${rounds} rounds`,
  );
  const clients = Array.from({ length: CLIENT_PROCESSES }, (_, p) =>
    startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: TURNS_PER_CHAT }),
  );
  const res = Object.fromEntries(
    VARIANTS.map((v) => [v.key, { idle: [], peak: [], byN: new Map(counts.map((n) => [n, []])) }]),
  );
  const failures = [];
  try {
    await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
    await warmClients(clients, { counts, warmMs, ms });
    for (let round = 0; round < rounds; round++) {
      const line = [];
      for (const v of rotate(VARIANTS, round)) {
        const server = await startServer(v);
        try {
          await sleep(settleMs);
          res[v.key].idle.push(rssMB(server.pid));
          const got = [];
          for (const n of counts) {
            const tag = `r${round}-n${n}`;
            // The commit counts of /metrics (every gateway but the HTTP ceiling, which has none).
            const batches = n === top && v.ceiling !== true;
            const w = await measureWindow(clients, {
              ...server,
              n,
              tag,
              warmMs,
              ms,
              sample: n === top,
              batches,
            });
            res[v.key].byN.get(n).push(w);
            if (n === top) res[v.key].peak.push(w.peakMB);
            if (w.errors) failures.push(`${v.key} ${n} clients: ${w.errors} (${w.lastError})`);
            const pooled =
              w.pooledShare === undefined ? "" : ` (${Math.round(100 * w.pooledShare)}% pooled)`;
            got.push(`${n}: ${Math.round(w.msgPerSec)}${pooled}`);
          }
          line.push(`${v.key} ${got.join("/")}`);
        } finally {
          await server.stop();
        }
      }
      log(`  round ${round + 1}/${rounds}: msg/s by clients ${line.join("; ")}`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
  }
  if (failures.length) log(`  failed requests: ${failures.join("; ")}`);
  return buildRows({ res, counts, top, failures });
}

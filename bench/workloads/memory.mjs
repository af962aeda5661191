// Workload 14: the gateway's memory over many sessions. A real `hearth
// gateway run` (WAL+FULL, group commit, echo responder, default
// configuration) started with node --expose-gc and a preload that runs a
// full GC on SIGUSR2 (bench/workers/gc-on-signal.mjs; the gateway exposes
// none). One client process drives it over HTTP in blocks: `clients`
// concurrent clients, each on a session of its own for `turnsPerSession`
// turns back to back; every block uses new sessions. The first block is
// memBaseTurns turns (clients × turnsPerSession); the run ends at memTurns
// turns over memSessions sessions. After the first block, after a tenth and
// half of the run and at its end: a settle, VmRSS (no GC), then SIGUSR2,
// VmRSS again (RssAnon, RssFile) and the V8 heap (the gateway's own
// /metrics). A structure that grows per session or per turn shows as a
// ratio over 1.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { rssMB, startServer } from "../lib/gateway-servers.mjs";
import { startChild } from "../lib/procs.mjs";
import { row } from "../lib/rows.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PRELOAD = fileURLToPath(new URL("../workers/gc-on-signal.mjs", import.meta.url));

/** The V8 heap in use and committed, and external memory, MB, from the gateway's /metrics (prom-client's default metrics). */
async function heapMB(address) {
  const text = await (await fetch(new URL("/metrics", address))).text();
  const value = (name) => {
    const line = text.split("\n").find((l) => l.startsWith(`hearth_nodejs_${name} `));
    return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) / 1e6 : Number.NaN;
  };
  return {
    heap: value("heap_size_used_bytes"),
    heapTotal: value("heap_size_total_bytes"),
    external: value("external_memory_bytes"),
  };
}

/** RssAnon and RssFile of /proc/<pid>/status, MB: what grows, the heaps or mapped files. */
function rssParts(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { anon: (kb("RssAnon") * 1024) / 1e6, file: (kb("RssFile") * 1024) / 1e6 };
}

/** Settle, read VmRSS, force a GC, read VmRSS and the heap. */
async function sample(server, settleMs, gcs) {
  await sleep(settleMs);
  const rss = rssMB(server.pid);
  process.kill(server.pid, "SIGUSR2");
  const n = gcs.next++;
  await server.child.line((l) => l.event === "bench.gc" && l.n === n);
  await sleep(200);
  const rssGc = rssMB(server.pid);
  return { rss, rssGc, ...rssParts(server.pid), ...(await heapMB(server.address)) };
}

export async function memoryWorkload({ sizes, rounds, log }) {
  const { memTurns, memSessions, memBaseTurns, memSettleMs } = sizes;
  const turnsPerSession = memTurns / memSessions;
  const clients = memBaseTurns / turnsPerSession;
  const blocks = memSessions / clients;
  if (![turnsPerSession, clients, blocks].every(Number.isInteger))
    throw new RangeError("memTurns / memSessions and memBaseTurns must divide evenly");
  const tenthBlock = Math.round(blocks / 10);
  const markOf = (done) =>
    done === 1
      ? "base"
      : done === blocks
        ? "end"
        : done === tenthBlock
          ? "tenth"
          : done === blocks / 2
            ? "half"
            : undefined;
  log(
    `14. gateway memory: ${memTurns.toLocaleString("en-US")} turns over ${memSessions.toLocaleString("en-US")} sessions (${clients} clients × ${turnsPerSession} turns a session) × ${rounds} rounds`,
  );
  const res = { base: [], tenth: [], half: [], end: [], msgPerSec: [] };
  const failures = [];
  for (let round = 0; round < rounds; round++) {
    const server = await startServer({
      synchronous: "full",
      groupCommit: true,
      nodeArgs: ["--expose-gc", "--import", PRELOAD],
    });
    const client = startChild("memory-client.mjs", { seed: 1400 + round });
    const gcs = { next: 1 };
    try {
      await client.line((l) => l.ready === true);
      let busyMs = 0;
      let turns = 0;
      for (let block = 0; block < blocks; block++) {
        const t0 = performance.now();
        client.send({
          op: "block",
          seq: block,
          address: server.address,
          block,
          clients,
          turnsPerSession,
        });
        const answer = await client.line((l) => l.op === "block" && l.seq === block);
        busyMs += performance.now() - t0;
        if (!answer.ok) throw new Error(`memory client: ${answer.error.message}`);
        turns += answer.result.turns;
        if (answer.result.errors)
          failures.push(`${answer.result.errors} (${answer.result.lastError})`);
        const mark = markOf(block + 1);
        if (mark) {
          const s = await sample(server, memSettleMs, gcs);
          res[mark].push(s);
          log(
            `  round ${round + 1}: ${turns.toLocaleString("en-US")} turns, ${((block + 1) * clients).toLocaleString("en-US")} sessions: RSS ${s.rss.toFixed(1)} MB, after GC ${s.rssGc.toFixed(1)} MB (anonymous ${s.anon.toFixed(1)}, files ${s.file.toFixed(1)}), V8 heap used ${s.heap.toFixed(1)} of ${s.heapTotal.toFixed(1)} MB, external ${s.external.toFixed(1)} MB`,
          );
        }
      }
      res.msgPerSec.push((2 * turns) / (busyMs / 1000));
    } finally {
      await client.stop();
      await server.stop();
    }
  }
  if (failures.length) log(`  failed requests: ${failures.join("; ")}`);
  return buildRows({ res, sizes, clients, failures });
}

function buildRows({ res, sizes, clients, failures }) {
  const workload = `14. gateway memory (ceiling: the same gateway after ${sizes.memBaseTurns.toLocaleString("en-US")} turns)`;
  const n = (v) => v.toLocaleString("en-US");
  const after = `${n(sizes.memTurns)} turns / ${n(sizes.memSessions)} sessions`;
  const baselines = {
    ceiling: `the same gateway after ${n(sizes.memBaseTurns)} turns / ${n(clients)} sessions`,
  };
  const note = failures.length ? `failed requests: ${failures.join("; ")}` : undefined;
  const pick = (mark, field) => res[mark].map((s) => s[field]);
  // The target is growth once warm: from half the run to its end (500 more
  // sessions, 50,000 more turns). Against the first 1,000 turns (the rows
  // below, reported without a target) the ratio also counts two pools that
  // size themselves and then stop: V8's young generation (16 MiB more when
  // V8 widens it under load, whenever that happens) and SQLite's page
  // cache, 16 MiB per connection in better-sqlite3's build (writer and
  // reader each fill theirs as the store grows past it). A structure kept
  // per session or per turn grows between half and end; those pools do not.
  const target = {
    text: "<= 1.05× halfway (no growth per session once warm)",
    kind: "ceiling",
    op: "<=",
    value: 1.05,
    basis: "worst",
    ...(sizes.mode === "quick" ? { applies: false } : {}),
  };
  const common = { workload, unit: "MB", better: "lower", baselines, ...(note ? { note } : {}) };
  const warm = res.half.length
    ? [
        row({
          ...common,
          workload: `14. gateway memory, once warm (ceiling: the same gateway halfway, ${n(sizes.memTurns / 2)} turns)`,
          baselines: {
            ceiling: `the same gateway after ${n(sizes.memTurns / 2)} turns / ${n(sizes.memSessions / 2)} sessions`,
          },
          metric: `VmRSS after ${after}, settled + forced GC`,
          hearth: pick("end", "rssGc"),
          ceiling: pick("half", "rssGc"),
          target,
        }),
      ]
    : [];
  const rows = [
    ...warm,
    row({
      ...common,
      metric: `VmRSS after ${after}, settled + forced GC`,
      hearth: pick("end", "rssGc"),
      ceiling: pick("base", "rssGc"),
    }),
    row({
      ...common,
      metric: `VmRSS after ${after}, settled, no GC`,
      hearth: pick("end", "rss"),
      ceiling: pick("base", "rss"),
    }),
    row({
      ...common,
      metric: `RssAnon (heaps, stacks) after ${after}, forced GC`,
      hearth: pick("end", "anon"),
      ceiling: pick("base", "anon"),
    }),
    row({
      ...common,
      metric: `RssFile (mapped files: node, addons) after ${after}, forced GC`,
      hearth: pick("end", "file"),
      ceiling: pick("base", "file"),
    }),
    row({
      ...common,
      metric: `V8 heap used after ${after}, forced GC`,
      hearth: pick("end", "heap"),
      ceiling: pick("base", "heap"),
    }),
    row({
      workload,
      metric: `acked messages/s over the run (${clients} clients)`,
      unit: "msg/s",
      better: "higher",
      hearth: res.msgPerSec,
    }),
  ];
  const midway = [
    ["tenth", 10],
    ["half", 2],
  ].filter(([mark]) => res[mark].length > 0);
  midway.forEach(([mark, part], i) => {
    rows.splice(
      warm.length + 2 + i,
      0,
      row({
        ...common,
        metric: `VmRSS after ${n(sizes.memTurns / part)} turns / ${n(sizes.memSessions / part)} sessions, settled + forced GC`,
        hearth: pick(mark, "rssGc"),
        ceiling: pick("base", "rssGc"),
      }),
    );
  });
  return rows;
}

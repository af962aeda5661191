// Not a workload: group commit's batching at 64 clients (issue 44, workload
// 3's rows "acked messages/s against group commit off" and "WAL fsyncs per
// acknowledged message"), for builds side by side: each build's gateway with
// group commit on and off, and the fair ceiling (bench/workers/gateway-sql-ceiling.mjs),
// on fresh homes, order rotated round by round, medians over the rounds.
// Every figure of workload 3's method (bench/workloads/gateway.mjs measureWindow).
// node bench/group-commit.mjs [rounds=5] [ms=1500] [label=dist ...]
// e.g. node bench/group-commit.mjs 5 1500 base=/work/main/dist this=dist (CLIENTS=8: another client count)
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./lib/gateway-servers.mjs";
import { startChild } from "./lib/procs.mjs";
import { rotate } from "./lib/stats.mjs";
import { measureWindow, TURNS_PER_CHAT, warmClients } from "./workloads/gateway.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const [roundsArg = "5", msArg = "1500", ...builds] = process.argv.slice(2);
const N = Number(process.env.CLIENTS ?? 64);
const ms = Number(msArg);
const warmMs = 500;
const dists = (builds.length ? builds : [`this=${join(here, "..", "dist")}`]).map((b) => {
  const [label, dist] = b.split("=");
  return { label, cli: join(resolve(dist), "cli", "main.js") };
});
const variants = [
  ...dists.flatMap(({ label, cli }) => [
    { key: `${label}:on`, synchronous: "full", groupCommit: true, cli },
    { key: `${label}:off`, synchronous: "full", groupCommit: false, cli },
  ]),
  { key: "ceiling", sqlCeiling: true, synchronous: "full" },
];
const median = (xs) => {
  const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? undefined : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

console.error(`load before: ${load()}`);
const clients = [0, 1].map((p) =>
  startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: TURNS_PER_CHAT }),
);
const res = Object.fromEntries(variants.map((v) => [v.key, []]));
try {
  await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
  await warmClients(clients, { counts: [N], warmMs, ms: 400 });
  for (let round = 0; round < Number(roundsArg); round++) {
    for (const v of rotate(variants, round)) {
      const server = await startServer(v);
      try {
        await new Promise((r) => setTimeout(r, 500));
        const w = await measureWindow(clients, {
          ...server,
          n: N,
          tag: `r${round}`,
          warmMs,
          ms,
          batches: true,
        });
        res[v.key].push(w);
        console.error(
          `round ${round + 1} ${v.key}: ${Math.round(w.msgPerSec)} msg/s, fsyncs/acked ${w.fsyncsPerMessage?.toFixed(4)}, commits/acked ${w.commitsPerMessage?.toFixed(4)}, pooled ${w.pooledShare?.toFixed(2)}, batch ${w.meanBatch?.toFixed(1)}, cpu/turn ${w.cpuPerTurn.toFixed(3)} ms, errors ${w.errors}`,
        );
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await Promise.all(clients.map((c) => c.stop()));
}
console.error(`load after: ${load()}`);
const summary = {};
for (const v of variants) {
  const ws = res[v.key];
  summary[v.key] = {
    msgPerSec: Math.round(median(ws.map((w) => w.msgPerSec))),
    fsyncsPerMessage: median(ws.map((w) => w.fsyncsPerMessage)),
    meanBatch: median(ws.map((w) => w.meanBatch)),
    cpuMsPerTurn: median(ws.map((w) => w.cpuPerTurn)),
    p99Ms: median(ws.map((w) => w.p99)),
    fsyncsPerMessageRounds: ws.map((w) => Number(w.fsyncsPerMessage?.toFixed(4))),
  };
}
for (const { label } of dists) {
  const on = res[`${label}:on`];
  const off = res[`${label}:off`];
  const ratios = on.map((w, i) => w.msgPerSec / off[i].msgPerSec);
  summary[`${label}:on/off`] = {
    median: median(ratios),
    rounds: ratios.map((r) => Number(r.toFixed(2))),
  };
}
summary.load = load();
console.log(JSON.stringify(summary, null, 1));

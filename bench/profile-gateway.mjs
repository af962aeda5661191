// Not a workload: a CPU profile of the gateway under workload 3's load.
// node bench/profile-gateway.mjs [dir] [clients] [ms] [synchronous]
// writes the gateway's .cpuprofile (node --cpu-prof) into dir and prints
// the heaviest functions by self time.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "./lib/gateway-servers.mjs";
import { startChild } from "./lib/procs.mjs";
import { measureWindow } from "./workloads/gateway.mjs";

const [dir = "/tmp/hearth-prof", clientsArg = "64", msArg = "5000", synchronous = "full"] =
  process.argv.slice(2);
const n = Number(clientsArg);
// PROF_INTERVAL: the sampling interval in µs (node's default 1000).
const nodeArgs = [
  "--cpu-prof",
  `--cpu-prof-dir=${dir}`,
  ...(process.env.PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.PROF_INTERVAL}`] : []),
];
// PROFILE=ceiling: the fair ceiling (bench/workers/gateway-sql-ceiling.mjs) instead.
const server =
  process.env.PROFILE === "ceiling"
    ? await startServer({ sqlCeiling: true, synchronous, nodeArgs })
    : await startServer({ synchronous, groupCommit: true, nodeArgs });
const clients = [0, 1].map((p) =>
  startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: 25 }),
);
await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
const w = await measureWindow(clients, {
  ...server,
  n,
  tag: "prof",
  warmMs: 300,
  ms: Number(msArg),
});
console.log(
  `${Math.round(w.msgPerSec)} msg/s, p99 ${w.p99} ms, ${w.cpuPerTurn.toFixed(3)} ms CPU/turn`,
);
await Promise.all(clients.map((c) => c.stop()));
await server.stop().catch(() => {});
const file = readdirSync(dir)
  .filter((f) => f.endsWith(".cpuprofile"))
  .map((f) => join(dir, f))
  .sort()
  .pop();
const prof = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of prof.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
/** Whether a sample's stack is inside a turn (runTurn). */
const inTurn = (id) => {
  for (let at = id; at !== undefined; at = parent.get(at))
    if (["runTurn", "append"].includes(byId.get(at).callFrame.functionName)) return true;
  return false;
};
// Only the samples from the first to the last turn: start-up and shutdown left out.
const turnSamples = prof.samples.map((id, i) => (inTurn(id) ? i : -1)).filter((i) => i >= 0);
const first = turnSamples[0] ?? 0;
const last = turnSamples.at(-1) ?? prof.samples.length - 1;
const self = new Map();
let total = 0;
for (let i = first; i <= last; i++) {
  const { functionName, url, lineNumber } = byId.get(prof.samples[i]).callFrame;
  const where = url.replace(/^.*node_modules\//, "nm:").replace(/^.*\/dist\//, "dist/");
  const key = `${functionName || "(anon)"} ${where}:${lineNumber}`;
  const us = prof.timeDeltas[i] ?? 0;
  self.set(key, (self.get(key) ?? 0) + us);
  total += us;
}
console.log(`${file}: ${(total / 1e6).toFixed(2)} s of samples from the first turn to the last`);
// Inclusive time of hearth's own functions (dist/): each counted once per sample.
const inclusive = new Map();
for (let i = first; i <= last; i++) {
  const seen = new Set();
  for (let at = prof.samples[i]; at !== undefined; at = parent.get(at)) {
    const { functionName, url, lineNumber } = byId.get(at).callFrame;
    if (!/\/dist\/|\/bench\//.test(url) && !process.env.ALL) continue;
    const where = url.replace(/^.*node_modules\//, "nm:").replace(/^.*\/dist\//, "dist/");
    const key = `${functionName || "(anon)"} ${where}:${lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
}
console.log("inclusive:");
for (const [key, us] of [...inclusive]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(process.env.TOP ?? 45)))
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
console.log("self:");
for (const [key, us] of [...self]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(process.env.TOP ?? 45)))
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);

// Not a workload: where the gateway's CPU goes per turn in the steady
// state, by thread and by kind of code, from Linux perf (on-CPU samples,
// unlike node --cpu-prof's wall-clock ones, which count a blocked fsync).
// node bench/perf-gateway.mjs [hearth|ceiling] [clients] [ms] [warmMs]
// Needs `perf` and the right to profile this user's processes. Prints
// µs of CPU per turn per category (docs/benchmarks.md, "Steady state, by
// thread").
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "./lib/gateway-servers.mjs";
import { startChild } from "./lib/procs.mjs";
import { measureWindow } from "./workloads/gateway.mjs";

const [kind = "hearth", clientsArg = "64", msArg = "6000", warmArg = "15000"] =
  process.argv.slice(2);
const HZ = 1999;
const dir = mkdtempSync(join(tmpdir(), "hearth-perf-"));
const data = join(dir, "perf.data");
const nodeArgs = ["--perf-basic-prof"];
const server =
  kind === "ceiling"
    ? await startServer({ sqlCeiling: true, synchronous: "full", nodeArgs })
    : await startServer({ synchronous: "full", groupCommit: true, nodeArgs });
const clients = [0, 1].map((p) =>
  startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: 25 }),
);
await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
const warmMs = Number(warmArg);
const ms = Number(msArg);
const recordS = ms / 1000 - 0.5; // inside the window
let perf;
const started = new Promise((resolve) =>
  setTimeout(() => {
    perf = spawn(
      "perf",
      [
        "record",
        "-F",
        String(HZ),
        "-g",
        "-p",
        String(server.pid),
        "-o",
        data,
        "--",
        "sleep",
        String(recordS),
      ],
      { stdio: "ignore" },
    );
    resolve();
  }, warmMs + 200),
);
const w = await measureWindow(clients, {
  ...server,
  n: Number(clientsArg),
  tag: "perf",
  warmMs,
  ms,
});
await started;
await new Promise((r) => (perf.exitCode !== null ? r() : perf.on("exit", r)));
await Promise.all(clients.map((c) => c.stop()));
await server.stop().catch(() => {});

const turns = (w.msgPerSec / 2) * recordS;
const report = execFileSync(
  "perf",
  [
    "report",
    "-i",
    data,
    "--no-children",
    "--sort",
    "pid,dso,symbol",
    "-n",
    "-g",
    "none",
    "--stdio",
  ],
  { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "ignore"] },
);
rmSync(dir, { recursive: true, force: true });
const category = (line) => {
  if (/\[k\]/.test(line)) return "kernel";
  if (/better_sqlite3/.test(line)) return "SQLite (C)";
  if (
    /JS:.*node_modules\/(fastify|@fastify|find-my-way|avvio|secure-json|fast-json|toad|fast-uri|ajv|pino|sonic)/.test(
      line,
    )
  )
    return "JS fastify, pino";
  if (/JS:/.test(line)) return "JS other (own, node's, dependencies)";
  if (/Builtins_/.test(line)) return "V8 builtins";
  if (/compiler::|Compile|[Mm]aglev|Turbofan|Pipeline/.test(line)) return "V8 compiler";
  if (/Scaveng|Mark|Sweep|Heap|Evacuat|GC|Compact/.test(line)) return "V8 GC";
  if (/libc/.test(line)) return "libc";
  return "node/V8 runtime";
};
const sums = new Map();
for (const line of report.split("\n")) {
  const m = /^\s+[\d.]+%\s+(\d+)\s+(\d+):/.exec(line);
  if (!m) continue;
  const thread = Number(m[2]) === server.pid ? "main" : "other threads";
  const key = `${thread}: ${category(line)}`;
  sums.set(key, (sums.get(key) ?? 0) + Number(m[1]));
}
const us = (samples) => ((samples * 1e6) / HZ / turns).toFixed(0).padStart(5);
console.log(
  `${kind}, ${clientsArg} clients: ${Math.round(w.msgPerSec)} msg/s, ${w.cpuPerTurn.toFixed(3)} ms CPU/turn (/proc); perf µs/turn:`,
);
for (const [key, n] of [...sums].sort((a, b) => a[0].localeCompare(b[0]) || b[1] - a[1]))
  console.log(`${us(n)}  ${key}`);
for (const t of ["main", "other threads"]) {
  const n = [...sums].filter(([k]) => k.startsWith(t)).reduce((s, [, v]) => s + v, 0);
  console.log(`${us(n)}  ${t}, all`);
}

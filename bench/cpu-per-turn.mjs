// Not a workload: the gateway's CPU per acknowledged turn under workload 3's
// load, without a profiler (bench/profile-gateway.mjs profiles it).
// node bench/cpu-per-turn.mjs [clients] [ms] [hearth|ceiling] [warmMs]
// prints {"kind","clients","warmMs","msgPerSec","cpuPerTurn"} (ms of the
// server's CPU, user + sys, every thread, per turn in the window). Run it
// from two builds of the repository in turn (rotated order) to compare a
// change with its base.
//
// warmMs (default 500): load before the window opens. A gateway is a
// daemon: its steady state is what a turn costs. V8 keeps optimizing
// (TurboFan, on its helper threads) for 10-15 s of this load on the 2-CPU
// machine, longer for hearth's larger code than for the ceiling's small
// script: with 500 ms that compilation is a third of the gap
// (docs/benchmarks.md, "Where a turn's CPU goes"); 15000 measures after it.
// HEARTH_BENCH_CLI=/path/to/other/dist/cli/main.js runs that build's gateway.
import { startServer } from "./lib/gateway-servers.mjs";
import { startChild } from "./lib/procs.mjs";
import { measureWindow } from "./workloads/gateway.mjs";

const [clientsArg = "64", msArg = "4000", kind = "hearth", warmArg = "500"] = process.argv.slice(2);
const server =
  kind === "ceiling"
    ? await startServer({ sqlCeiling: true, synchronous: "full" })
    : await startServer({
        synchronous: "full",
        groupCommit: true,
        // HEARTH_BENCH_CLI: another build's dist/cli/main.js (the base of a change), same script.
        ...(process.env.HEARTH_BENCH_CLI ? { cli: process.env.HEARTH_BENCH_CLI } : {}),
      });
const clients = [0, 1].map((p) =>
  startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: 25 }),
);
await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
const w = await measureWindow(clients, {
  ...server,
  n: Number(clientsArg),
  tag: "m",
  warmMs: Number(warmArg),
  ms: Number(msArg),
});
console.log(
  JSON.stringify({
    kind,
    clients: Number(clientsArg),
    warmMs: Number(warmArg),
    msgPerSec: Math.round(w.msgPerSec),
    cpuPerTurn: Number(w.cpuPerTurn.toFixed(4)),
  }),
);
await Promise.all(clients.map((c) => c.stop()));
await server.stop().catch(() => {});

// Not a workload: the gateway's CPU per acknowledged turn under workload 3's
// load, without a profiler (bench/profile-gateway.mjs profiles it).
// node bench/cpu-per-turn.mjs [clients] [ms] [hearth|ceiling]
// prints {"kind","clients","msgPerSec","cpuPerTurn"} (ms of the server's CPU,
// user + sys, per turn in the window). Run it from two builds of the
// repository in turn (rotated order) to compare a change with its base.
import { startServer } from "./lib/gateway-servers.mjs";
import { startChild } from "./lib/procs.mjs";
import { measureWindow } from "./workloads/gateway.mjs";

const [clientsArg = "64", msArg = "4000", kind = "hearth"] = process.argv.slice(2);
const server =
  kind === "ceiling"
    ? await startServer({ sqlCeiling: true, synchronous: "full" })
    : await startServer({ synchronous: "full", groupCommit: true });
const clients = [0, 1].map((p) =>
  startChild("gateway-client.mjs", { seed: 300 + p, turnsPerChat: 25 }),
);
await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
const w = await measureWindow(clients, {
  ...server,
  n: Number(clientsArg),
  tag: "m",
  warmMs: 500,
  ms: Number(msArg),
});
console.log(
  JSON.stringify({
    kind,
    clients: Number(clientsArg),
    msgPerSec: Math.round(w.msgPerSec),
    cpuPerTurn: Number(w.cpuPerTurn.toFixed(4)),
  }),
);
await Promise.all(clients.map((c) => c.stop()));
await server.stop().catch(() => {});

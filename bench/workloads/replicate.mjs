// Workload 17: continuous replication's cost to the writer (issue 46).
// The same appends (600-byte messages, one transaction each, at
// synchronous FULL) with and without replication of the store to a
// directory target (replicate.intervalMs 1000, the default), in the same
// process, rounds interleaved. CPU per append is the process's user +
// system time over the appends and the last tick's shipment, divided by
// the appends: the replicator's reads, checksums and writes included.
// Target: <= 1.05x the CPU per append without replication. Also the
// replication lag seen under that load (the largest a tick reported).
import { openStore } from "../../dist/index.js";
import { startReplication } from "../../dist/ops/replicate/run.js";
import { row } from "../lib/rows.mjs";
import { newStore, removeDir, tempDir } from "../lib/stores.mjs";

const CONTENT = "r".repeat(600);

async function once(replicate, appends) {
  const { home } = await newStore("replicate");
  const target = tempDir("replicate-target");
  const config = replicate
    ? {
        backup: { targets: [{ name: "bench", type: "dir", path: target }] },
        replicate: { target: "bench" },
      }
    : {};
  const store = await openStore({ home, config });
  const replication = await startReplication({
    config: store.config,
    home,
    stores: [store],
    log: { info: () => {}, warn: () => {} },
  });
  let lagMax = 0;
  const sampler = setInterval(() => {
    for (const s of replication.statuses()) lagMax = Math.max(lagMax, s.lagMs ?? 0);
  }, 50);
  try {
    const session = await store.sessions.create({ title: "bench" });
    const before = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < appends; i++)
      await store.messages.append(session.id, { role: "user", content: CONTENT });
    await replication.tick();
    const cpu = process.cpuUsage(before);
    return {
      cpuUsPerAppend: (cpu.user + cpu.system) / appends,
      appendsPerSecond: appends / ((performance.now() - started) / 1000),
      lagMs: lagMax,
    };
  } finally {
    clearInterval(sampler);
    await replication.stop();
    await store.close();
    removeDir(home);
    removeDir(target);
  }
}

export async function replicateWorkload({ sizes, rounds, log }) {
  const appends = sizes.replicateAppends;
  const on = [];
  const off = [];
  for (let r = 0; r < rounds; r++) {
    // Interleaved, the order alternating: drift in the machine hits both alike.
    for (const replicate of r % 2 ? [true, false] : [false, true]) {
      const result = await once(replicate, appends);
      (replicate ? on : off).push(result);
      log(
        `17. replicate: round ${r + 1}/${rounds} ${replicate ? "with" : "without"}: ${result.cpuUsPerAppend.toFixed(1)} µs CPU/append, lag ${result.lagMs} ms`,
      );
    }
  }
  const baselines = { ceiling: "the same appends without replication" };
  const workload = `17. replication overhead (${appends} appends, dir target, intervalMs 1000)`;
  return [
    row({
      workload,
      metric: "CPU per append",
      unit: "µs",
      better: "lower",
      hearth: on.map((r) => r.cpuUsPerAppend),
      ceiling: off.map((r) => r.cpuUsPerAppend),
      baselines,
      target: { text: "<= 1.05x without", kind: "ceiling", op: "<=", value: 1.05, basis: "median" },
    }),
    row({
      workload,
      metric: "appends/s",
      unit: "append/s",
      better: "higher",
      hearth: on.map((r) => r.appendsPerSecond),
      ceiling: off.map((r) => r.appendsPerSecond),
      baselines,
    }),
    row({
      workload,
      metric: "largest replication lag under the load",
      unit: "ms",
      better: "lower",
      hearth: on.map((r) => r.lagMs),
    }),
  ];
}

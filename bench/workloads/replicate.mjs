// Workload 17: continuous replication's cost to the writer (issue 46).
// The same appends (600-byte messages, one transaction each, at
// synchronous FULL) with and without replication of the store to a
// directory target (replicate.intervalMs 1000, the default), in the same
// process, rounds interleaved. Everything involved runs in this process
// (the writer, its checkpoint thread, the replicator and its packing
// thread, the libuv pool doing their file I/O), so two CPU figures per
// append over the appends and the last tick's shipment:
//   - the writer's: the main thread's user + system time (where
//     better-sqlite3 runs each statement and, at FULL, the commit's fsync,
//     and where the replicator's own code runs), /proc/self/task/<pid>/stat;
//   - the total: process.cpuUsage(), every thread of the process.
// Target (issue 46, "replication overhead on the writer"): the writer's
// CPU per append <= 1.05x without replication. Also the volume shipped per
// append and the replication lag under that load: the largest age, sampled
// every 50 ms, of the newest write known shipped (intervalMs plus a tick).
import { openStore } from "../../dist/index.js";
import { startReplication } from "../../dist/ops/replicate/run.js";
import { lagAt } from "../../dist/ops/replicate/status.js";
import { row } from "../lib/rows.mjs";
import { newStore, removeDir, tempDir } from "../lib/stores.mjs";
import { mainThreadCpuUs } from "../lib/thread-cpu.mjs";

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
    for (const s of replication.statuses()) lagMax = Math.max(lagMax, lagAt(s) ?? 0);
  }, 50);
  try {
    const session = await store.sessions.create({ title: "bench" });
    await replication.tick(); // the generation's snapshot, outside the measured span
    const shippedBefore = shipped(replication);
    const before = process.cpuUsage();
    const writerBefore = mainThreadCpuUs();
    const started = performance.now();
    for (let i = 0; i < appends; i++)
      await store.messages.append(session.id, { role: "user", content: CONTENT });
    await replication.tick();
    const cpu = process.cpuUsage(before);
    const writer = mainThreadCpuUs() - writerBefore;
    const after = shipped(replication);
    return {
      cpuUsPerAppend: (cpu.user + cpu.system) / appends,
      writerUsPerAppend: writer / appends,
      appendsPerSecond: appends / ((performance.now() - started) / 1000),
      lagMs: lagMax,
      walBytesPerAppend: (after.walBytes - shippedBefore.walBytes) / appends,
      bytesPerAppend: (after.bytes - shippedBefore.bytes) / appends,
      restarts: after.restarts - shippedBefore.restarts,
      restartLockedMs: after.restartLockedMs - shippedBefore.restartLockedMs,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    clearInterval(sampler);
    await replication.stop();
    await store.close();
    removeDir(home);
    removeDir(target);
  }
}

function shipped(replication) {
  const c = replication.counters()[0];
  return {
    walBytes: c?.walBytes ?? 0,
    bytes: (c?.bytes ?? 0) + (c?.snapshotBytes ?? 0),
    restarts: c?.restarts ?? 0,
    restartLockedMs: c?.restartLockedMs ?? 0,
  };
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
        `17. replicate: round ${r + 1}/${rounds} ${replicate ? "with" : "without"}: writer ${result.writerUsPerAppend.toFixed(1)} µs, total ${result.cpuUsPerAppend.toFixed(1)} µs CPU/append, ${result.appendsPerSecond.toFixed(0)} appends/s${replicate ? `, lag ${result.lagMs} ms, ${(result.walBytesPerAppend / 1024).toFixed(1)} KB WAL -> ${(result.bytesPerAppend / 1024).toFixed(2)} KB shipped per append, ${result.restarts} WAL restarts holding the write lock ${result.restartLockedMs} ms of ${result.seconds.toFixed(1)} s` : ""}`,
      );
    }
  }
  const baselines = { ceiling: "the same appends without replication" };
  const workload = `17. replication overhead (${appends} appends, dir target, intervalMs 1000)`;
  return [
    row({
      workload,
      metric: "writer's CPU per append (its thread)",
      unit: "µs",
      better: "lower",
      hearth: on.map((r) => r.writerUsPerAppend),
      ceiling: off.map((r) => r.writerUsPerAppend),
      baselines,
      target: { text: "<= 1.05x without", kind: "ceiling", op: "<=", value: 1.05, basis: "median" },
    }),
    row({
      workload,
      metric: "total CPU per append (every thread)",
      unit: "µs",
      better: "lower",
      hearth: on.map((r) => r.cpuUsPerAppend),
      ceiling: off.map((r) => r.cpuUsPerAppend),
      baselines,
    }),
    row({
      workload,
      metric: "bytes put on the target per append",
      unit: "B",
      better: "lower",
      hearth: on.map((r) => r.bytesPerAppend),
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

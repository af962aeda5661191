// Before each workload of a full run: wait for the machine to be quiet, so one workload's
// aftermath does not land in the next one's rounds. A workload that wrote a
// GiB leaves dirty pages the kernel writes back for seconds afterwards (the
// fsyncs of the next workload queue behind them), and a PostgreSQL or a
// child that has not yet exited still takes CPU. The wait: sync(1), then
// sample /proc/stat and /proc/meminfo every half second until the CPUs are
// at least 90% idle and dirty + writeback pages are under 32 MiB, for at
// most 30 s; what it waited for is returned to be logged, and a machine that
// never quietened is said so (the workload still runs: the figures say what
// the machine was like).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const MiB = 1024 * 1024;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Aggregate CPU jiffies from /proc/stat: [busy, total]. */
function cpuJiffies() {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] ?? 0); // idle + iowait
  const total = v.reduce((a, b) => a + b, 0);
  return [total - idle, total];
}

/** Dirty + Writeback from /proc/meminfo, bytes. */
function unwrittenBytes() {
  const info = readFileSync("/proc/meminfo", "utf8");
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(info)?.[1] ?? 0);
  return (kb("Dirty") + kb("Writeback")) * 1024;
}

/**
 * Waits until the machine is quiet (CPUs ≥ 90% idle over half a second,
 * dirty + writeback < 32 MiB) or `maxMs` passed.
 * @returns {{ quiet: boolean, waitedMs: number, busy: number, unwrittenMiB: number }}
 */
export async function quietMachine({ maxMs = 30_000, sampleMs = 500 } = {}) {
  const t0 = performance.now();
  spawnSync("sync");
  for (;;) {
    const [b0, t0j] = cpuJiffies();
    await sleep(sampleMs);
    const [b1, t1j] = cpuJiffies();
    const busy = t1j > t0j ? (b1 - b0) / (t1j - t0j) : 1;
    const unwritten = unwrittenBytes();
    const waitedMs = performance.now() - t0;
    const quiet = busy < 0.1 && unwritten < 32 * MiB;
    if (quiet || waitedMs >= maxMs) return { quiet, waitedMs, busy, unwrittenMiB: unwritten / MiB };
  }
}

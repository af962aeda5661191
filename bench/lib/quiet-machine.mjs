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

/**
 * The whole machine's busy and total CPU time so far (/proc/stat, clock
 * ticks; iowait counts as idle). Two readings give the share of the machine
 * busy between them (machineBusy).
 */
export function machineTicks() {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + (iowait ?? 0) };
}

/** The share of the machine's CPU time that was busy between two machineTicks() readings (0–1). */
export function machineBusy(before, after) {
  const total = after.total - before.total;
  return total > 0 ? (after.busy - before.busy) / total : 1;
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
    const before = machineTicks();
    await sleep(sampleMs);
    const busy = machineBusy(before, machineTicks());
    const unwritten = unwrittenBytes();
    const waitedMs = performance.now() - t0;
    const quiet = busy < 0.1 && unwritten < 32 * MiB;
    if (quiet || waitedMs >= maxMs) return { quiet, waitedMs, busy, unwrittenMiB: unwritten / MiB };
  }
}

// Event-loop lateness, and the part of it the machine owes.
//
// A loop's timer that fires late was delayed by the loop's own work, by a
// wait for a CPU behind other threads, or by a CPU that ran nothing at all:
// on a virtual machine a vCPU the host does not schedule runs no guest
// code, not even the timer interrupt that would wake a sleeping thread. The
// third is no program's doing, and the guest's CPU accounting cannot see it
// (this VM reports no steal time). It is told apart by a sibling process
// pinned to each CPU, idle but for its own 10 ms timer: when that timer
// fires late although the sibling did not run meanwhile, the part of the
// lateness it was not even waiting in the run queue
// (/proc/thread-self/schedstat) is time its CPU did not run: a CPU that
// runs anything takes the timer's interrupt and queues the sibling. Measured
// here (docs/benchmarks-history.md): ~90 ms such freezes of one CPU, seen at
// the same instant by every sleeping process on it and by none on the other.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { startChild } from "./procs.mjs";

/** Late samples from this long on carry the thread's CPU and scheduler times. */
const DETAIL_MS = 20;
/** A pinned sibling that ran this long during its lateness was not frozen. */
const FROZEN_SLACK_MS = 1;

/** This thread's [ns on CPU, ns runnable but waiting, times scheduled], or null where /proc cannot tell. */
function threadTimes() {
  try {
    return readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
  } catch {
    return null;
  }
}

/** The CPU this thread last ran on (field 39 of /proc/thread-self/stat), or undefined. */
function cpuNow() {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "utf8");
    const cpu = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[36]);
    return Number.isInteger(cpu) ? cpu : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A 10 ms interval recording how late it fires: { stop() → samples }. Each
 * sample is { at, lateMs } (epoch ms); one late by DETAIL_MS or more also
 * has `cpu` (where the thread ran the timer) and `ranMs`, `runqMs`: the
 * thread's time on a CPU and waiting for one since the sample before.
 */
export function lagMonitor() {
  const samples = [];
  let last = performance.now();
  let before = threadTimes();
  const sample = () => {
    const now = performance.now();
    const times = threadTimes();
    const s = { at: performance.timeOrigin + now, lateMs: Math.max(0, now - last - 10) };
    if (s.lateMs >= DETAIL_MS && times && before) {
      s.cpu = cpuNow();
      s.ranMs = (times[0] - before[0]) / 1e6;
      s.runqMs = (times[1] - before[1]) / 1e6;
    }
    samples.push(s);
    before = times;
    last = now;
  };
  const timer = setInterval(sample, 10);
  return {
    samples,
    stop() {
      sample();
      clearInterval(timer);
      return samples;
    },
  };
}

/**
 * What a child answers of its samples: { late, restMs }, the samples worth
 * attributing (late by DETAIL_MS or more, with their CPU) and the largest
 * lateness of the others.
 */
export function lateSamples(samples) {
  const late = samples.filter((s) => s.lateMs >= DETAIL_MS);
  const rest = samples.filter((s) => s.lateMs < DETAIL_MS).map((s) => s.lateMs);
  return { late, restMs: Math.max(0, ...rest) };
}

/**
 * A pinned sibling's samples → the spans its CPU ran nothing: [{ cpu,
 * from, to }]. A late sample of a sibling that did not run meanwhile was
 * asleep past its timer, then woken and queued for `runqMs` (behind
 * whatever the CPU ran once it ran again), then ran: the span from its
 * due time to its waking, late minus queued, is the CPU's freeze. The
 * queued part is not counted: the CPU ran something then.
 */
function freezesOf(samples, cpu) {
  return samples
    .filter((s) => s.cpu === cpu && s.ranMs < FROZEN_SLACK_MS && s.lateMs - s.runqMs >= DETAIL_MS)
    .map((s) => ({ cpu, from: s.at - s.lateMs, to: s.at - s.runqMs }));
}

/**
 * The worst lateness of a child's samples ({ late, restMs }: lateSamples)
 * once the freezes of the CPU each late sample ran on are taken out of it
 * (a sample with no CPU keeps all of it: what cannot be told is counted).
 * Fails closed: with no freezes, the raw worst.
 */
export function worstNetOfFreezes({ late, restMs }, freezes) {
  let worst = restMs;
  for (const s of late) {
    const from = s.at - s.lateMs;
    const spans = freezes
      .filter((f) => f.cpu !== undefined && f.cpu === s.cpu && f.to > from && f.from < s.at)
      .map((f) => [Math.max(f.from, from), Math.min(f.to, s.at)])
      .sort((a, b) => a[0] - b[0]);
    let frozen = 0;
    let end = from;
    for (const [a, b] of spans) {
      if (b <= end) continue;
      frozen += b - Math.max(a, end);
      end = b;
    }
    worst = Math.max(worst, s.lateMs - frozen);
  }
  return worst;
}

/**
 * The machine's floor of event-loop lateness over a span: one idle process
 * (bench/workers/idle-lag.mjs) per CPU, each pinned to its CPU, sampling its
 * own loop every 10 ms from now. `stop()` answers { floorMs, freezes,
 * pinned }: the largest lateness any of them saw, the spans a CPU ran
 * nothing, and whether every sibling was pinned (if not, no freeze is
 * claimed).
 */
export async function idleFloor() {
  const cpus = availableParallelism();
  const idle = await Promise.all(
    Array.from({ length: cpus }, async (_, cpu) => {
      const child = startChild("idle-lag.mjs", {});
      const ready = await child.line((l) => l.ready === true);
      return { child, cpu, pinned: pin(ready.pid, cpu) };
    }),
  );
  for (const { child } of idle) child.send({ op: "start" });
  await Promise.all(idle.map(({ child }) => child.line((l) => l.op === "start")));
  return {
    async stop() {
      for (const { child } of idle) child.send({ op: "stop" });
      let floorMs = 0;
      const freezes = [];
      const pinned = idle.every((i) => i.pinned);
      for (const { child, cpu } of idle) {
        const { late, restMs } = (await child.line((l) => l.op === "stop")).result;
        floorMs = Math.max(floorMs, restMs, ...late.map((s) => s.lateMs));
        if (pinned) freezes.push(...freezesOf(late, cpu));
      }
      await Promise.all(idle.map(({ child }) => child.stop()));
      return { floorMs, freezes, pinned };
    },
    end: () => Promise.all(idle.map(({ child }) => child.stop())),
  };
}

/** Pin every thread of `pid` to `cpu` (util-linux taskset); false where that cannot be done. */
function pin(pid, cpu) {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

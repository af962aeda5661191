// In-process rounds on tinybench: one Bench per variant and round, the
// variants' order rotated every round (hearth, ceiling, naive; then
// ceiling, naive, hearth; ...). Each task gets a fresh context from its
// `setup` (beforeAll: warmup and run phases each get their own) and exactly
// `iterations` timed calls (a variant may set fewer: the slow naive ones).
import { PerformanceObserver } from "node:perf_hooks";
import { Bench } from "tinybench";
import { costMeter, gcEntriesDelivered } from "./io-counters.mjs";
import { rotate } from "./stats.mjs";

/**
 * variants: [{ name, async: boolean, iterations?, setup(round, phase) → ctx, fn(ctx, i), teardown?(ctx), serverCpu?(ctx) }]
 * Returns { [name]: [{ meanMs, p50, p99, max, samples, cpuMs, io, serverCpuMs, gcs }] } with one entry per round;
 * cpuMs is this process's CPU time (user + system, every thread: process.cpuUsage())
 * per timed call of the run phase, setup and teardown excluded; io the
 * read and write system calls over the same calls, per call ({ syscalls });
 * serverCpuMs the CPU per call of the server processes `serverCpu(ctx)`
 * names (a Map pid → CPU ms so far, as in interleaved.mjs; NaN when it
 * names none); gcs the garbage collections of this thread's heap per call
 * (perf_hooks "gc" entries: the main thread's isolate, not a worker's).
 */
export async function runRounds({ rounds, iterations, warmup = 0, variants, log }) {
  const out = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let round = 0; round < rounds; round++) {
    const line = [];
    for (const v of rotate(variants, round)) {
      const n = v.iterations ?? iterations;
      const bench = new Bench({
        iterations: n,
        time: 0,
        warmup: warmup > 0,
        warmupIterations: Math.min(warmup, n),
        warmupTime: 0,
        throws: true,
      });
      let ctx;
      let i = 0;
      let meter;
      let cpuUs = 0;
      let io;
      let server0;
      let serverMs = Number.NaN;
      let gcs = 0;
      let gc;
      bench.add(v.name, v.async ? async () => v.fn(ctx, i++) : () => v.fn(ctx, i++), {
        async: v.async,
        beforeAll: async (mode) => {
          i = 0;
          ctx = await v.setup(round, mode);
          server0 = mode === "warmup" ? undefined : await v.serverCpu?.(ctx);
          if (mode !== "warmup") {
            gcs = 0;
            gc = new PerformanceObserver((list) => {
              gcs += list.getEntries().length;
            });
            gc.observe({ entryTypes: ["gc"] });
          }
          meter = mode === "warmup" ? undefined : costMeter();
        },
        afterAll: async () => {
          if (meter) {
            const spent = meter.stop();
            cpuUs = spent.cpuMs * 1000;
            io = { syscalls: spent.syscalls / Math.max(1, i) };
            // A synchronous variant never yielded: its collections' entries arrive now.
            await gcEntriesDelivered();
            gcs += gc.takeRecords().length;
            gc.disconnect();
            const server1 = await v.serverCpu?.(ctx);
            if (server1?.size) {
              serverMs = 0;
              for (const [pid, ms] of server1) serverMs += ms - (server0?.get(pid) ?? 0);
              serverMs /= Math.max(1, i);
            }
          }
          await v.teardown?.(ctx);
          ctx = undefined;
        },
      });
      await bench.run();
      const { latency, period } = bench.tasks[0].result;
      out[v.name].push({
        meanMs: period,
        p50: latency.p50,
        p99: latency.p99,
        max: latency.max,
        samples: latency.samplesCount,
        cpuMs: cpuUs / 1000 / Math.max(1, latency.samplesCount),
        io,
        serverCpuMs: serverMs,
        gcs: gcs / Math.max(1, latency.samplesCount),
      });
      line.push(`${v.name} ${period.toFixed(3)} ms`);
    }
    log?.(`  round ${round + 1}/${rounds}: mean per call ${line.join(", ")}`);
  }
  return out;
}

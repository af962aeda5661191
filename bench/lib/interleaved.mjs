// Rounds in which the variants take turns in blocks of calls, the order
// rotated block by block, instead of one variant after another: for
// variants that share a server (PostgreSQL), whose own work (checkpoints,
// autovacuum, the WAL's disk) comes in waves of seconds. Run one after
// another, a wave fell on whichever variant's turn it was, and the rounds'
// ratios spread from 0.65 to 0.94 (docs/benchmarks-history.md). Every
// other block goes in the reverse order, so no variant always follows the
// same one. Not for hearth on SQLite against an in-process ceiling: hearth's
// fsync policy counts the ceiling's calls as its event loop's other work; a
// variant marked `alone` (hearth on SQLite beside PostgreSQL) runs after
// the others' blocks, by itself, so its checkpoints and fsyncs fall on no
// other variant's block either.
import { PerformanceObserver } from "node:perf_hooks";
import { costMeter, gcEntriesDelivered } from "./io-counters.mjs";
import { quantile, rotate } from "./stats.mjs";

/**
 * variants: [{ name, setup(round, phase) → ctx, fn(ctx, i) (may return a
 * promise), teardown?(ctx), alone?, serverCpu?(ctx) }], all with
 * `iterations` calls per round, in blocks of `block`. A warm-up phase of
 * `warmup` calls per variant runs on contexts of its own first. Returns {
 * [name]: [{ meanMs, p50, p99, max, samples, cpuMs, io, gcs, serverCpuMs }] },
 * one entry per round (the shape of runRounds): cpuMs, io and gcs are this
 * process's CPU, kernel I/O counters and main-thread garbage collections
 * per call over the variant's own blocks (the blocks run one at a time);
 * serverCpuMs the CPU per call of the server processes `serverCpu(ctx)`
 * names (a Map pid → CPU ms so far, read before and after each block; a
 * process that ended inside a block loses that block's share; NaN when it
 * names none).
 */
export async function runInterleaved({ rounds, iterations, block, warmup = 0, variants, log }) {
  const out = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let round = 0; round < rounds; round++) {
    if (warmup > 0) {
      for (const v of rotate(variants, round)) {
        const ctx = await v.setup(round, "warmup");
        for (let i = 0; i < warmup; i++) await v.fn(ctx, i);
        await v.teardown?.(ctx);
      }
    }
    const ctxs = new Map();
    for (const v of variants) ctxs.set(v.name, await v.setup(round, "run"));
    const times = new Map(variants.map((v) => [v.name, []]));
    const costs = new Map(
      variants.map((v) => [v.name, { cpuUs: 0, syscalls: 0, gcs: 0, server: 0, servers: 0 }]),
    );
    const run = async (v, from, to) => {
      const ctx = ctxs.get(v.name);
      const list = times.get(v.name);
      const cost = costs.get(v.name);
      const server0 = await v.serverCpu?.(ctx);
      const gc = new PerformanceObserver((list) => {
        cost.gcs += list.getEntries().length;
      });
      gc.observe({ entryTypes: ["gc"] });
      const meter = costMeter();
      for (let i = from; i < to; i++) {
        const t = performance.now();
        await v.fn(ctx, i);
        list.push(performance.now() - t);
      }
      const spent = meter.stop();
      await gcEntriesDelivered();
      cost.gcs += gc.takeRecords().length;
      gc.disconnect();
      cost.cpuUs += spent.cpuMs * 1000;
      cost.syscalls += spent.syscalls;
      const server1 = await v.serverCpu?.(ctx);
      if (server1) {
        for (const [pid, ms] of server1) cost.server += ms - (server0?.get(pid) ?? 0);
        cost.servers = Math.max(cost.servers, server1.size);
      }
    };
    const together = variants.filter((v) => !v.alone);
    try {
      for (let from = 0, b = 0; from < iterations; from += block, b++) {
        const order = rotate(together, round + b);
        if (b % 2 === 1) order.reverse();
        for (const v of order) await run(v, from, Math.min(iterations, from + block));
      }
      for (const v of variants.filter((x) => x.alone)) await run(v, 0, iterations);
    } finally {
      for (const v of variants) await v.teardown?.(ctxs.get(v.name));
    }
    const line = [];
    for (const v of variants) {
      const list = times.get(v.name);
      const cost = costs.get(v.name);
      const meanMs = list.reduce((s, x) => s + x, 0) / list.length;
      out[v.name].push({
        meanMs,
        p50: quantile(list, 0.5),
        p99: quantile(list, 0.99),
        max: Math.max(...list),
        samples: list.length,
        cpuMs: cost.cpuUs / 1000 / list.length,
        io: { syscalls: cost.syscalls / list.length },
        gcs: cost.gcs / list.length,
        serverCpuMs: cost.servers > 0 ? cost.server / list.length : Number.NaN,
      });
      line.push(`${v.name} ${meanMs.toFixed(3)} ms`);
    }
    log?.(
      `  round ${round + 1}/${rounds} (interleaved by ${block}): mean per call ${line.join(", ")}`,
    );
  }
  return out;
}

// Workload 7, quiet part: hearth's backup() against today's way, VACUUM INTO,
// on the same quiet large store, each in a caller process of its own
// (bench/workers/backup-caller.mjs), its loop sampled every 10 ms meanwhile.
// hearth: backup() on a reader store (online backup on a worker thread,
// fsync, quick_check, rename) | ceiling: VACUUM INTO on a read-only
// connection, fsync, quick_check, rename (rawBackup, the steps hearth's
// backup ran before) on the caller's thread.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { idleFloor, worstNetOfFreezes } from "../lib/loop-lag.mjs";
import { killChildren, startChild } from "../lib/procs.mjs";
import { row } from "../lib/rows.mjs";
import { rotate } from "../lib/stats.mjs";

// The loop is sampled from just before the backup call to its return (opening
// the store, closing it and removing the copy are not the backup's). Idle
// sibling processes, one pinned to each CPU, sample their own loops over the
// same span: the machine's noise floor, which no backup can go below, and
// the spans a CPU ran nothing (bench/lib/loop-lag.mjs).
async function once(variant, large, target) {
  try {
    const got = await backupInCaller(large, variant, target);
    rmSync(got.path, { force: true });
    return {
      ms: got.to - got.from,
      lateMs: got.callerStallMs,
      netMs: worstNetOfFreezes(got.callerLate, got.floor.freezes),
      floorMs: got.floor.floorMs,
      freezeMs: Math.max(0, ...got.floor.freezes.map((f) => f.to - f.from)),
    };
  } finally {
    await killChildren();
  }
}

/**
 * One backup (hearth's backup() or the raw steps: `variant`) of the large
 * store in a caller process of its own (bench/workers/backup-caller.mjs),
 * with idle siblings pinned to each CPU over the same span: the caller's
 * answer, and the siblings' `floor` ({ floorMs, freezes, pinned }).
 */
export async function backupInCaller(large, variant, target) {
  const caller = startChild("backup-caller.mjs", { home: large.home, path: large.path });
  let idle;
  try {
    await caller.line((l) => l.ready === true);
    idle = await idleFloor();
    caller.send({ op: "backup", variant, target });
    const answer = await caller.line((l) => l.op === "backup");
    if (!answer.ok) throw new Error(`backup caller: ${answer.error.message}`);
    const floor = await idle.stop();
    idle = undefined;
    return { ...answer.result, floor };
  } finally {
    await idle?.end();
    await caller.stop();
  }
}

export async function quietBackupRows({ large, rounds, scratch, log, workload }) {
  log(
    `7. backup of the quiet store: backup() vs VACUUM INTO, each in a caller process × ${rounds} rounds`,
  );
  const r = { hearth: [], ceiling: [] };
  for (let round = 0; round < rounds; round++) {
    for (const v of rotate(["hearth", "ceiling"], round))
      r[v].push(await once(v, large, join(scratch, `quiet-${v}-${round}.db`)));
    log(
      `  round ${round + 1}/${rounds}: hearth ${(r.hearth.at(-1).ms / 1000).toFixed(1)} s (loop late ≤ ${r.hearth.at(-1).lateMs.toFixed(0)} ms, ${r.hearth.at(-1).netMs.toFixed(0)} ms less freezes; idle siblings ≤ ${r.hearth.at(-1).floorMs.toFixed(0)} ms), VACUUM INTO ${(r.ceiling.at(-1).ms / 1000).toFixed(1)} s (late ≤ ${r.ceiling.at(-1).lateMs.toFixed(0)} ms)`,
    );
  }
  const baselines = { ceiling: "VACUUM INTO (the backup before)" };
  return [
    row({
      workload,
      metric: "backup time, quiet store",
      unit: "ms",
      better: "lower",
      hearth: r.hearth.map((x) => x.ms),
      ceiling: r.ceiling.map((x) => x.ms),
      baselines,
      target: {
        text: "≤ 1.3× VACUUM INTO",
        kind: "ceiling",
        op: "<=",
        value: 1.3,
        basis: "median",
      },
    }),
    row({
      workload,
      metric: "backup caller's max event-loop lateness, quiet store",
      unit: "ms",
      better: "lower",
      hearth: r.hearth.map((x) => x.lateMs),
      ceiling: r.ceiling.map((x) => x.lateMs),
      baselines,
      note: "as measured; the next row takes out what the machine owes",
    }),
    row({
      workload,
      metric: "backup caller's max event-loop lateness, quiet store, less its CPU's freezes",
      unit: "ms",
      better: "lower",
      hearth: r.hearth.map((x) => x.netMs),
      ceiling: r.ceiling.map((x) => x.netMs),
      baselines,
      target: { text: "< 50 ms every round", kind: "absolute", op: "<", value: 50, basis: "worst" },
    }),
    row({
      workload,
      metric:
        "idle siblings (one pinned to each CPU): max event-loop lateness, same span (noise floor)",
      unit: "ms",
      better: "lower",
      hearth: r.hearth.map((x) => x.floorMs),
      ceiling: r.ceiling.map((x) => x.floorMs),
      baselines,
    }),
    row({
      workload,
      metric:
        "longest CPU freeze, same span (a pinned sibling's timer late while it did not run, less its wait in the run queue)",
      unit: "ms",
      better: "lower",
      hearth: r.hearth.map((x) => x.freezeMs),
      ceiling: r.ceiling.map((x) => x.freezeMs),
      baselines,
    }),
  ];
}

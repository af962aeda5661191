// The rows of workloads 3 and 8 (gateway.mjs): group commit's throughput,
// latency and counted costs against the fair ceiling and group commit off,
// and the gateway's memory.
import { row } from "../lib/rows.mjs";

/** A window's pooled share in %: never a 0 made up for a count /metrics did not give. */
function pooledPercent(w) {
  if (w.pooledShare === undefined)
    throw new Error("the gateway's /metrics gave no hearth_write_commits_total for this window");
  return 100 * w.pooledShare;
}

const baselines = {
  ceiling: "fastify + raw better-sqlite3, the same SQL and group commits",
  naive: "group commit off",
};
const threadBaselines = {
  ceiling: "the fair ceiling with its writer connection in a worker thread (prototype)",
};
const httpBaselines = { ceiling: "the gateway's HTTP ceiling (no-op store)" };
/**
 * Group commit off at the defaults is not one fsync per message: while the
 * loop is busy, concurrent commits share their fsyncs on the pool
 * (durability.syncOffLoop). This row shows group commit against one
 * transaction and one fsync of its own per message.
 */
const oneSyncBaselines = {
  naive:
    "one transaction and one fsync per message (group commit off, durability.syncOffLoop false)",
};
// Throughput targets are judged on the median over rounds (issue 44: "every
// round" stays only for stalls); the per-round range is printed beside it.
const TARGETS = [
  { text: ">= 3× group commit off", kind: "naive", op: ">=", value: 3, basis: "median" },
  { text: ">= 0.8× fair ceiling", kind: "ceiling", op: ">=", value: 0.8, basis: "median" },
];
const CPU_TARGET = {
  text: "<= 1.25× fair ceiling (CPU)",
  kind: "ceiling",
  op: "<=",
  value: 1.25,
  basis: "median",
};
const SQL = { full: "sqlFull", normal: "sqlNormal" };

export function buildRows({ res, counts, top, failures }) {
  const workload = "3. gateway group commit (ceiling: raw SQL server; naive: group commit off)";
  const note = failures.length ? `failed requests: ${failures.join("; ")}` : undefined;
  /** hearth, ceiling and naive figures of one level and client count. */
  const series = (level, n, field) => {
    const pick = (key) => res[key].byN.get(n).map((w) => w[field]);
    return { hearth: pick(level), ceiling: pick(SQL[level]), naive: pick(`${level}Off`) };
  };
  const rows = [];
  for (const level of ["full", "normal"]) {
    const name = `WAL+${level.toUpperCase()}`;
    for (const n of counts) {
      rows.push(
        row({
          workload,
          metric: `${name}, ${n} clients: acked messages/s`,
          unit: "msg/s",
          better: "higher",
          baselines,
          ...series(level, n, "msgPerSec"),
          ...(level === "full" && n === 64 ? { target: TARGETS } : {}),
          ...(note ? { note } : {}),
        }),
        row({
          workload,
          metric: `${name}, ${n} clients: p99 per turn`,
          unit: "ms",
          better: "lower",
          baselines,
          ...series(level, n, "p99"),
        }),
      );
    }
  }
  rows.push(
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: acked messages/s against one fsync per message`,
      unit: "msg/s",
      better: "higher",
      baselines: oneSyncBaselines,
      hearth: res.full.byN.get(top).map((w) => w.msgPerSec),
      naive: res.fullOneSync.byN.get(top).map((w) => w.msgPerSec),
    }),
    // Issue 44: the gateway's CPU per acknowledged turn at most 1.25× the
    // fair ceiling's (fastify and raw better-sqlite3 in the same group
    // commits), judged at 8 and 64 clients; 1 client shown beside.
    ...counts.map((n) =>
      row({
        workload,
        metric: `WAL+FULL, ${n} clients: gateway CPU per turn`,
        unit: "ms",
        better: "lower",
        baselines,
        ...series("full", n, "cpuPerTurn"),
        ...(n === 8 || n === 64 ? { target: CPU_TARGET } : {}),
      }),
    ),
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: client processes' CPU per turn`,
      unit: "ms",
      better: "lower",
      baselines,
      ...series("full", top, "clientCpuPerTurn"),
    }),
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: messages per commit`,
      unit: "msg",
      better: "higher",
      baselines,
      hearth: res.full.byN.get(top).map((w) => w.meanBatch),
      ceiling: res.sqlFull.byN.get(top).map((w) => w.meanBatch),
    }),
    // Group commit's efficiency, counted (issue 44): WAL fsyncs per acknowledged message.
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: WAL fsyncs per acknowledged message`,
      unit: "fsyncs",
      better: "lower",
      baselines,
      ...series("full", top, "fsyncsPerMessage"),
      target: { text: "<= 1/20", kind: "absolute", op: "<=", value: 0.05, basis: "median" },
    }),
    // Whether group commit off shared fsyncs on the pool (the policy moves
    // them off a busy loop), which would bring it closer to group commit.
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: commits whose fsync left the event loop (shared on the libuv pool)`,
      unit: "%",
      better: "higher",
      baselines,
      hearth: res.full.byN.get(top).map(pooledPercent),
      naive: res.fullOff.byN.get(top).map(pooledPercent),
    }),
    ...counts.map((n) =>
      row({
        workload,
        metric: `WAL+FULL, ${n} clients: acked messages/s against the writer-thread prototype`,
        unit: "msg/s",
        better: "higher",
        baselines: threadBaselines,
        hearth: res.full.byN.get(n).map((w) => w.msgPerSec),
        ceiling: res.sqlFullThread.byN.get(n).map((w) => w.msgPerSec),
      }),
    ),
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: p99 per turn against the writer-thread prototype`,
      unit: "ms",
      better: "lower",
      baselines: threadBaselines,
      hearth: res.full.byN.get(top).map((w) => w.p99),
      ceiling: res.sqlFullThread.byN.get(top).map((w) => w.p99),
    }),
    row({
      workload,
      metric: `WAL+FULL, ${top} clients: acked messages/s against HTTP alone`,
      unit: "msg/s",
      better: "higher",
      baselines: httpBaselines,
      hearth: res.full.byN.get(top).map((w) => w.msgPerSec),
      ceiling: res.http.byN.get(top).map((w) => w.msgPerSec),
    }),
  );
  const footprint = "8. gateway RSS (ceiling: raw SQL server, WAL+FULL; naive: group commit off)";
  const rss = (field) => ({
    hearth: res.full[field],
    ceiling: res.sqlFull[field],
    naive: res.fullOff[field],
  });
  const footprintRows = [
    row({
      workload: footprint,
      metric: "idle, after start and settle",
      unit: "MB",
      better: "lower",
      baselines,
      ...rss("idle"),
      target: { text: "< 100 MB", kind: "absolute", op: "<", value: 100, basis: "median" },
    }),
    row({
      workload: footprint,
      metric: `max under ${top} clients, WAL+FULL`,
      unit: "MB",
      better: "lower",
      baselines,
      ...rss("peak"),
    }),
  ];
  return { rows, footprintRows };
}

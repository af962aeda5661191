// Workload 4: 2 writer processes + 3 reader processes on one store for a
// few seconds, WAL+FULL. hearth processes vs raw better-sqlite3 processes
// running the same SQL (ceiling) vs naive processes (a connection per
// operation), interleaved round by round, each on a fresh copy of the data.
import { killChildren, startChild } from "../lib/procs.mjs";
import { row } from "../lib/rows.mjs";
import { quantile, rotate } from "../lib/stats.mjs";
import { bulkFill, fileSize, newStore, removeDir } from "../lib/stores.mjs";

const WRITERS = 2;
const READERS = 3;
const SESSIONS = 100;
const PER_SESSION = 100;
const MiB = 1024 * 1024;

async function once(variant, round, ms) {
  const { home, path } = await newStore("mixed", "full");
  const ids = bulkFill(path, { total: SESSIONS * PER_SESSION, sessions: SESSIONS, seed: 7 });
  const roles = [...Array(WRITERS).fill("writer"), ...Array(READERS).fill("reader")];
  const children = roles.map((role, k) =>
    startChild("mixed-worker.mjs", {
      variant,
      role,
      home,
      path,
      ids,
      seed: 1000 * (round + 1) + k,
      synchronous: "full",
    }),
  );
  try {
    await Promise.all(children.map((c) => c.line((l) => l.ready === true)));
    for (const c of children) c.send({ op: "run", ms });
    const answers = await Promise.all(children.map((c) => c.line((l) => l.op === "run")));
    const failed = answers.find((a) => !a.ok);
    if (failed) throw new Error(`mixed ${variant}: ${failed.error.message}`);
    const walBytes = fileSize(`${path}-wal`); // before anyone closes (a last close checkpoints)
    const writers = answers.slice(0, WRITERS).map((a) => a.result);
    const readers = answers.slice(WRITERS).map((a) => a.result);
    const readLat = readers.flatMap((r) => r.latencies);
    const writeLat = writers.flatMap((r) => r.latencies);
    const commits = writers.map((w) => w.ops);
    const per = (list, field) =>
      list.reduce((n, x) => n + x[field], 0) /
      Math.max(
        1,
        list.reduce((n, x) => n + x.ops, 0),
      );
    return {
      writeCpuMs: per(writers, "cpuMs"),
      readCpuMs: per(readers, "cpuMs"),
      writeSyscalls: per(writers, "syscalls"),
      readSyscalls: per(readers, "syscalls"),
      readsPerSec: readLat.length / (ms / 1000),
      readP99: quantile(readLat, 0.99),
      writesPerSec: writeLat.length / (ms / 1000),
      writeP99: quantile(writeLat, 0.99),
      fairness: Math.min(...commits) / Math.max(...commits),
      commits,
      walMiB: walBytes / MiB,
      maxLateMs: Math.max(...writers.map((w) => w.maxLateMs), ...readers.map((r) => r.maxLateMs)),
      errors: answers.reduce((n, a) => n + a.result.errors, 0),
      lastError: answers.map((a) => a.result.lastError).find(Boolean),
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await killChildren();
    removeDir(home);
  }
}

export async function mixedWorkload({ sizes, rounds, log }) {
  const ms = sizes.mixedMs;
  log(`4. mixed: ${WRITERS} writers + ${READERS} readers for ${ms} ms × ${rounds} rounds`);
  const variants = ["hearth", "ceiling", "naive"];
  const res = { hearth: [], ceiling: [], naive: [] };
  for (let round = 0; round < rounds; round++) {
    const line = [];
    for (const v of rotate(variants, round)) {
      const r = await once(v, round, ms);
      res[v].push(r);
      line.push(
        `${v} ${Math.round(r.readsPerSec)} reads/s, commits ${r.commits.join("/")}` +
          (r.errors ? `, ${r.errors} errors (${r.lastError})` : ""),
      );
    }
    log(`  round ${round + 1}/${rounds}: ${line.join("; ")}`);
  }
  const get = (key) => ({
    hearth: res.hearth.map((r) => r[key]),
    ceiling: res.ceiling.map((r) => r[key]),
    naive: res.naive.map((r) => r[key]),
  });
  const workload = "4. mixed: 2 writer + 3 reader processes";
  const errors = get("errors");
  const naiveNote =
    errors.naive.some((n) => n > 0) || errors.ceiling.some((n) => n > 0)
      ? `failed operations per round: ceiling ${errors.ceiling.join("/")}, naive ${errors.naive.join("/")}`
      : undefined;
  return [
    row({
      workload,
      metric: "reads/s (all readers)",
      unit: "reads/s",
      better: "higher",
      ...get("readsPerSec"),
      target: { text: ">= 0.8× raw", kind: "ceiling", op: ">=", value: 0.8, basis: "median" },
    }),
    row({
      workload,
      metric: "read p99",
      unit: "ms",
      better: "lower",
      ...get("readP99"),
      target: { text: "<= 1.5× raw", kind: "ceiling", op: "<=", value: 1.5, basis: "median" },
    }),
    row({
      workload,
      metric: "writes/s (both writers)",
      unit: "commits/s",
      better: "higher",
      ...get("writesPerSec"),
    }),
    row({ workload, metric: "write p99", unit: "ms", better: "lower", ...get("writeP99") }),
    // The counted cost (issue 44): each process's CPU (every thread) and its
    // read + write system calls (/proc/self/io) over the run, per operation.
    row({
      workload,
      metric: "writers' CPU per commit (process.cpuUsage, every thread)",
      unit: "ms",
      better: "lower",
      ...get("writeCpuMs"),
    }),
    row({
      workload,
      metric: "writers' read + write system calls per commit (/proc/self/io)",
      unit: "calls",
      better: "lower",
      ...get("writeSyscalls"),
    }),
    row({
      workload,
      metric: "readers' CPU per read (process.cpuUsage, every thread)",
      unit: "ms",
      better: "lower",
      ...get("readCpuMs"),
    }),
    row({
      workload,
      metric: "readers' read + write system calls per read (/proc/self/io)",
      unit: "calls",
      better: "lower",
      ...get("readSyscalls"),
    }),
    row({
      workload,
      metric: "writer fairness (min/max commits)",
      unit: "ratio",
      better: "higher",
      ...get("fairness"),
      target: {
        text: ">= 0.5 every round",
        kind: "absolute",
        op: ">=",
        value: 0.5,
        basis: "worst",
      },
    }),
    row({
      workload,
      metric: "WAL size at the end",
      unit: "MiB",
      better: "lower",
      ...get("walMiB"),
      target: {
        text: "< 64 MiB every round",
        kind: "absolute",
        op: "<",
        value: 64,
        basis: "worst",
      },
    }),
    row({
      workload,
      metric: "max event-loop lateness (any process)",
      unit: "ms",
      better: "lower",
      ...get("maxLateMs"),
      ...(naiveNote ? { note: naiveNote } : {}),
    }),
  ];
}

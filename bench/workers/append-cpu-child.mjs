// One run of bench/append-cpu.mjs in a process of its own: a fresh store of
// 100 empty sessions, `warm` single-message appends at WAL+FULL (not
// measured), then `count` more, and this process's CPU over them
// (process.cpuUsage: user + system, every thread: the checkpoint thread's,
// the libuv pool's and V8's helpers too). kind "hearth" runs the build in
// `dist` (its openStore); "ceiling" runs bench/lib/sql.mjs's raw writer
// (the same statements, one fsync per commit, SQLite's own checkpoints).
// Prints one JSON line.
import { readdirSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { messageList } from "../lib/corpus.mjs";
import { ceilingWriter } from "../lib/sql.mjs";
import { addSessions, removeDir, tempDir } from "../lib/stores.mjs";

const [kind, dist, warmArg, countArg, level = "full"] = process.argv.slice(2);
const warm = Number(warmArg);
const count = Number(countArg);
const SESSIONS = 100;
const { openStore } = await import(pathToFileURL(`${dist}/index.js`).href);
const home = tempDir("append-cpu");
const created = await openStore({ home, config: { durability: { synchronous: level } } });
const path = created.path;
await created.close();
const ids = addSessions(path, SESSIONS);
const list = messageList(1000, warm + count);

let append;
let close;
let commits = () => undefined;
if (kind === "ceiling") {
  const w = ceilingWriter(path, level);
  append = (i) => w.append(ids[i % SESSIONS], list[i]);
  close = async () => w.close();
} else {
  // HEARTH_BENCH_DURABILITY: more durability settings as JSON, for scratch comparisons.
  const more = JSON.parse(process.env.HEARTH_BENCH_DURABILITY ?? "{}");
  const store = await openStore({
    home,
    config: { durability: { synchronous: level, ...more } },
  });
  append = (i) => store.messages.append(ids[i % SESSIONS], list[i]);
  close = () => store.close();
  commits = () => store.offLoopCommits?.();
}
/**
 * CPU of each live thread of this process by name
 * (/proc/self/task/N/schedstat: nanoseconds on CPU; /proc/self/task/N/stat's
 * utime + stime, in clock ticks of 10 ms, where schedstat is missing): the
 * main thread, then the others' (checkpoint thread, libuv pool, V8's
 * helpers) largest first. A thread that ends inside the window is in
 * process.cpuUsage only.
 */
function threadNs() {
  const out = new Map();
  let tasks = [];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return out; // no /proc: process.cpuUsage only
  }
  for (const tid of tasks) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]));
    } catch {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(tid, (Number(f[11]) + Number(f[12])) * 10_000_000);
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}
function threadsUs(before, after) {
  let main = 0;
  const others = [];
  for (const [tid, ns] of after) {
    const us = (ns - (before.get(tid) ?? 0)) / 1000 / count;
    if (Number(tid) === process.pid) main = us;
    else if (us > 0.05) others.push(us);
  }
  others.sort((a, b) => b - a);
  return { main, others: others.map((us) => Number(us.toFixed(1))) };
}
for (let i = 0; i < warm; i++) await append(i);
const th0 = threadNs();
const m0 = process.hrtime.bigint();
const t0 = performance.now();
const c0 = process.cpuUsage();
const r0 = process.resourceUsage();
for (let i = warm; i < warm + count; i++) await append(i);
const cpu = process.cpuUsage(c0);
const wall = performance.now() - t0;
const m1 = process.hrtime.bigint();
const r1 = process.resourceUsage();
const threads = threadsUs(th0, threadNs());
const modes = commits();
await close();
removeDir(home);
console.log(
  JSON.stringify({
    kind,
    count,
    cpuUs: (cpu.user + cpu.system) / count,
    userUs: cpu.user / count,
    sysUs: cpu.system / count,
    wallUs: (wall * 1000) / count,
    // CLOCK_MONOTONIC seconds of the measured window (perf's timestamps use the same clock).
    window: [Number(m0) / 1e9, Number(m1) / 1e9],
    ...(modes ? { commits: modes } : {}),
    volCtx: (r1.voluntaryContextSwitches - r0.voluntaryContextSwitches) / count,
    minFlt: (r1.minorPageFault - r0.minorPageFault) / count,
    // µs per append: the main thread, and every other thread that ran (/proc/self/task).
    threads,
  }),
);

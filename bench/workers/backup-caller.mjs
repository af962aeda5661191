// The caller of workload 7's backup under load, a process of its own: it
// holds nothing but the store it backs up, as a gateway, dashboard or
// scheduler calling backup() would, so the lateness of its event loop is the
// backup's doing, not the garbage collection of the bench's own heap (the
// corpora and results of the workloads before it). {"op":"backup",
// "variant":"hearth"|"ceiling","target"} runs one backup: hearth's backup()
// on a reader store, or the raw steps (VACUUM INTO, fsync, quick_check,
// rename) on a read-only connection, while a 10 ms interval records how late
// it fires. Returns { from, to, callerStallMs, callerLate, gcMaxMs, path,
// cpuMs, syscalls } (epoch ms; callerLate: its samples as lateSamples gives them
// (bench/lib/loop-lag.mjs); gcMaxMs: the longest garbage collection of this
// process meanwhile; cpuMs and syscalls: this process's, from to to).
import { PerformanceObserver } from "node:perf_hooks";
import Database from "better-sqlite3";
import { openStore } from "../../dist/index.js";
import { backup } from "../../dist/ops/backup.js";
import { costMeter } from "../lib/io-counters.mjs";
import { lagMonitor, lateSamples } from "../lib/loop-lag.mjs";
import { serve } from "../lib/procs.mjs";
import { rawBackup } from "../lib/sql.mjs";

const { home, path } = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();

serve({
  async backup({ variant, target }) {
    let gcMaxMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
    });
    gc.observe({ entryTypes: ["gc"] });
    let from;
    let to;
    let copy = target;
    // The backup's counted cost: this process's CPU (every thread) and system calls, from and to.
    let spent;
    // Sampled from just before the call to its return: opening and closing
    // the store are not the backup's.
    let lag;
    if (variant === "hearth") {
      const store = await openStore({ home, role: "reader" });
      lag = lagMonitor();
      const cost = costMeter();
      from = now();
      copy = (await backup(store)).path;
      to = now();
      spent = cost.stop();
      lag.stop();
      await store.close();
    } else {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      lag = lagMonitor();
      const cost = costMeter();
      from = now();
      rawBackup(db, target);
      to = now();
      spent = cost.stop();
      lag.stop();
      db.close();
    }
    const callerStallMs = Math.max(...lag.samples.map((s) => s.lateMs));
    gc.disconnect();
    const callerLate = lateSamples(lag.samples);
    return { from, to, callerStallMs, callerLate, gcMaxMs, path: copy, ...spent };
  },
});

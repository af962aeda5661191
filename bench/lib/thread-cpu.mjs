// CPU time of this process's main thread (the writer's: better-sqlite3 runs
// every statement, and the commit's fsync at synchronous FULL, on it), from
// /proc/self/task/<pid>/stat (utime + stime, clock ticks). process.cpuUsage()
// is the whole process: every thread (libuv pool, checkpoint thread, workers).
import { readFileSync } from "node:fs";

const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** Microseconds of CPU the main thread has used (10 ms resolution). */
export function mainThreadCpuUs() {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

// The kernel's I/O counters of a process (/proc/<pid>/io, every thread of
// it): read and write system calls, and the bytes they moved (page cache
// included). Counted events that a busy machine cannot inflate (issue 44):
// a read that takes twice the system calls is twice the work whatever the
// load. Without /proc (or without permission), every counter is NaN, and
// the rows built on it print as missing rather than as zero.
import { readFileSync } from "node:fs";

const FIELDS = ["rchar", "wchar", "syscr", "syscw"];

/** { rchar, wchar, syscr, syscw } of `pid` ("self": this process) now. */
export function ioCounters(pid = "self") {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/io`, "utf8");
  } catch {
    return Object.fromEntries(FIELDS.map((f) => [f, Number.NaN]));
  }
  const out = {};
  for (const f of FIELDS) out[f] = Number(new RegExp(`^${f}:\\s+(\\d+)`, "m").exec(text)?.[1]);
  return out;
}

/**
 * Resolves once the "gc" performance entries of collections so far have
 * reached their observers: Node queues them from the collection and
 * delivers them two event-loop turns later, and takeRecords() does not
 * hold them meanwhile (a synchronous loop of calls delivers none).
 */
export async function gcEntriesDelivered() {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Starts counting this process's cost: stop() returns the CPU (ms, every
 * thread: process.cpuUsage) and the read + write system calls since.
 */
export function costMeter() {
  const io0 = ioCounters();
  const cpu0 = process.cpuUsage();
  return {
    stop() {
      const cpu = process.cpuUsage(cpu0);
      const io = ioCounters();
      return {
        cpuMs: (cpu.user + cpu.system) / 1000,
        syscalls: io.syscr - io0.syscr + io.syscw - io0.syscw,
      };
    },
  };
}

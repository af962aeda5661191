import { readFileSync } from "node:fs";

/** Facts about a running process read from /proc; undefined fields could not be read. */
export interface ProcessInfo {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTicks: number | undefined;
  /** Wall-clock start, derived from boot time and clock ticks. */
  since: Date | undefined;
  commandLine: string | undefined;
}

const CLOCK_TICKS = 100; // USER_HZ is 100 on every Linux ABI Node supports.

/** Field 22 of /proc/<pid>/stat, parsed after the last ')' (comm may hold spaces and parens). */
export function parseStartTicks(stat: string): number | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  // After ") " come fields 3..; start time is field 22, so index 19 here.
  const value = Number(stat.slice(close + 2).split(" ")[19]);
  return Number.isSafeInteger(value) ? value : undefined;
}

function bootTimeSeconds(): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8")
      .split("\n")
      .find((l) => l.startsWith("btime "));
    return line ? Number(line.slice(6)) : undefined;
  } catch {
    return undefined;
  }
}

export function readBootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

export function describeProcess(pid: number): ProcessInfo {
  let startTicks: number | undefined;
  let commandLine: string | undefined;
  try {
    startTicks = parseStartTicks(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    startTicks = undefined;
  }
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    commandLine = raw.split("\0").filter(Boolean).join(" ") || undefined;
  } catch {
    commandLine = undefined;
  }
  const boot = bootTimeSeconds();
  const since =
    startTicks !== undefined && boot !== undefined
      ? new Date((boot + startTicks / CLOCK_TICKS) * 1000)
      : undefined;
  return { pid, startTicks, since, commandLine };
}

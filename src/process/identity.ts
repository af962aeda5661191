import { readFileSync } from "node:fs";
import { maskArgv } from "../mask-secrets.js";

/**
 * P1: a process is (pid, start time in clock ticks since boot, boot id).
 * This module is the only place that decides whether a recorded process is
 * alive; nothing in hearth uses kill(pid, 0) for that, since it only proves
 * that some process has the number.
 */
export interface ProcessIdentity {
  pid: number;
  /** /proc/<pid>/stat field 22. */
  startTicks: number;
  /** /proc/sys/kernel/random/boot_id of the boot the process ran in. */
  bootId: string;
}

export type Liveness = "alive" | "dead" | "unknown";

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

export interface StatFields {
  /** R, S, D, Z, T, ... (field 3). */
  state: string;
  startTicks: number;
}

/** Fields 3 and 22 of /proc/<pid>/stat, parsed after the last ')' (comm may hold spaces and parens). */
export function parseStat(stat: string): StatFields | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = stat.slice(close + 2).split(" ");
  const startTicks = Number(fields[19]);
  const state = fields[0];
  if (!state || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
}

export function parseStartTicks(stat: string): number | undefined {
  return parseStat(stat)?.startTicks;
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

/**
 * This boot's id. $HEARTH_TEST_BOOT_ID replaces it, for tests only: several
 * processes of one machine then act as hosts of their own (each with its
 * own home), which is how the tests simulate hosts sharing one PostgreSQL
 * database. Never set it elsewhere: /proc then proves nothing of a record.
 */
export function readBootId(): string | undefined {
  const simulated = process.env.HEARTH_TEST_BOOT_ID;
  if (simulated) return simulated;
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

let self: ProcessIdentity | undefined;

/** This process's identity; undefined where /proc cannot prove it (not Linux). */
export function currentIdentity(): ProcessIdentity | undefined {
  if (self) return self;
  const bootId = readBootId();
  let stat: StatFields | undefined;
  try {
    stat = parseStat(readFileSync(`/proc/${process.pid}/stat`, "utf8"));
  } catch {
    stat = undefined;
  }
  if (!bootId || !stat) return undefined;
  self = { pid: process.pid, startTicks: stat.startTicks, bootId };
  return self;
}

/**
 * Is the recorded process still running? "alive" only when pid, start ticks
 * and boot id all match a running, non-zombie process; a record from another
 * boot, a vanished pid, a recycled pid or a zombie are "dead"; anything that
 * cannot be read is "unknown" (callers then ask the kernel-held lock).
 */
export function liveness(record: ProcessIdentity): Liveness {
  const bootId = readBootId();
  if (!bootId) return "unknown";
  if (record.bootId !== bootId) return "dead";
  let text: string;
  try {
    text = readFileSync(`/proc/${record.pid}/stat`, "utf8");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "dead" : "unknown";
  }
  const stat = parseStat(text);
  if (!stat) return "unknown";
  if (stat.startTicks !== record.startTicks) return "dead";
  return stat.state === "Z" || stat.state === "X" ? "dead" : "alive";
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
    // Another process's argv may carry a password (`--to postgres://u:pw@…`): never shown.
    commandLine = maskArgv(raw.split("\0").filter(Boolean)).join(" ") || undefined;
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

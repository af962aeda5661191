import { Cron } from "croner";
import { nodeCrypto } from "../../builtins.js";
import type { JobConfig } from "../../config/schema.js";

/** At most this many due times of one gap are recorded one by one; older ones are summarised. */
export const MAX_RECORDED_DUE = 100;

/** The job's schedule as a croner pattern, never started (hearth keeps its own timers). */
export function cronOf(job: Pick<JobConfig, "schedule" | "timezone">): Cron {
  return new Cron(job.schedule, {
    paused: true,
    ...(job.timezone ? { timezone: job.timezone } : {}),
  });
}

/** The next due time strictly after `afterMs`, or null when the pattern has none. */
export function nextDue(
  job: Pick<JobConfig, "schedule" | "timezone">,
  afterMs: number,
): number | null {
  return cronOf(job).nextRun(new Date(afterMs))?.getTime() ?? null;
}

export interface DueTimes {
  /** Due times in (after, now], oldest first, at most MAX_RECORDED_DUE of the newest. */
  due: number[];
  /** Due times older than `due[0]` that are not listed (a long gap of a frequent job). */
  uncounted: boolean;
}

/** Every due time in (afterMs, nowMs], oldest first (bounded: a long gap keeps the newest). */
export function dueBetween(
  job: Pick<JobConfig, "schedule" | "timezone">,
  afterMs: number,
  nowMs: number,
): DueTimes {
  const cron = cronOf(job);
  const due: number[] = [];
  let d = cron.nextRun(new Date(afterMs));
  while (d && d.getTime() <= nowMs && due.length < MAX_RECORDED_DUE) {
    due.push(d.getTime());
    d = cron.nextRun(d);
  }
  if (!d || d.getTime() > nowMs) return { due, uncounted: false };
  // More than the bound: keep the newest ones.
  const recent = cron
    .previousRuns(MAX_RECORDED_DUE, new Date(nowMs + 1000))
    .map((x) => x.getTime())
    .filter((t) => t <= nowMs && t > afterMs)
    .sort((a, b) => a - b);
  return { due: recent, uncounted: true };
}

/** How many due times passed since `sinceMs` (capped): "has not succeeded for N periods". */
export function periodsSince(
  job: Pick<JobConfig, "schedule" | "timezone">,
  sinceMs: number,
  nowMs: number,
  cap = 1000,
): number {
  const cron = cronOf(job);
  let n = 0;
  let d = cron.nextRun(new Date(sinceMs));
  while (d && d.getTime() <= nowMs && n < cap) {
    n++;
    d = cron.nextRun(d);
  }
  return n;
}

/**
 * A fixed delay in [0, jitterMs] for one job on one profile: many profiles
 * due at the same minute start spread out, each at the same offset every
 * time (predictable, and a restart does not reshuffle them).
 */
export function jitterFor(job: Pick<JobConfig, "name" | "jitterMs">, profile: string): number {
  if (job.jitterMs <= 0) return 0;
  const h = nodeCrypto().createHash("sha256").update(`${job.name}\0${profile}`).digest();
  return h.readUInt32BE(0) % (job.jitterMs + 1);
}

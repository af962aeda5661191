import type { JobConfig } from "../config/schema.js";
import { dueBetween } from "../ops/jobs/due.js";

export type Trigger = "schedule" | "catch-up";

/** A due time recorded without a run, with the reason. */
export interface NotRun {
  scheduledAt: number;
  outcome: "missed" | "skipped";
  note: string;
  trigger: Trigger;
}

export interface DuePlan {
  /** The newest due time handled: the slot's next starting point (unchanged when none was due). */
  lastHandled: number;
  /** Due times recorded without a run, in the order they are recorded. */
  notRun: NotRun[];
  /** The one due time that runs now, if any. */
  run: { scheduledAt: number; trigger: Trigger } | undefined;
}

/**
 * What one job does with every due time in (lastHandled, now]: the newest
 * runs (late, a catch-up, when the scheduler was not running at the time or
 * is late), the older ones of the gap are recorded missed (at most one
 * catch-up per gap). A late due time is recorded missed when the job has
 * catch-up off, and any due time is recorded skipped while the job's
 * previous run is still in progress (`busy`): runs of one job never overlap.
 */
export function planDue(
  job: Pick<JobConfig, "schedule" | "timezone" | "catchUp">,
  lastHandled: number,
  now: number,
  at: { startup: boolean; busy: { pid: number | undefined } | undefined },
): DuePlan {
  const { due, uncounted } = dueBetween(job, lastHandled, now);
  if (due.length === 0) return { lastHandled, notRun: [], run: undefined };
  const handled = due[due.length - 1]!;
  const latest = due.pop()!;
  const late = at.startup || due.length > 0;
  const notRun: NotRun[] = due.map((t, i) => ({
    scheduledAt: t,
    outcome: "missed",
    note: `${at.startup ? "no scheduler ran" : "the scheduler was late"} at this time; at most one catch-up run per gap${i === 0 && uncounted ? "; earlier due times of this gap are not recorded" : ""}`,
    trigger: "catch-up",
  }));
  const trigger: Trigger = late ? "catch-up" : "schedule";
  if (late && !job.catchUp) {
    notRun.push({
      scheduledAt: latest,
      outcome: "missed",
      note: "catch-up is off for this job",
      trigger: "catch-up",
    });
    return { lastHandled: handled, notRun, run: undefined };
  }
  if (at.busy) {
    const pid = at.busy.pid;
    notRun.push({
      scheduledAt: latest,
      outcome: "skipped",
      note: `the previous run of this job is still in progress${pid ? ` (worker pid ${pid})` : ""}`,
      trigger,
    });
    return { lastHandled: handled, notRun, run: undefined };
  }
  return { lastHandled: handled, notRun, run: { scheduledAt: latest, trigger } };
}

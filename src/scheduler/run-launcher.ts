import type { HearthConfig } from "../config/schema.js";
import { builtFile } from "../files/built.js";
import { type LaunchReport, launchJob } from "../ops/jobs/launch.js";
import type { HealthTracker } from "./job-health.js";
import type { SlotRuns } from "./job-slot.js";
import type { Log } from "./log.js";
import type { ProfileAccess } from "./profile-access.js";

/** Jobs that rewrite the database: they run alone on their profile (the scheduler's own writes wait). */
const STRUCTURAL = new Set(["optimize"]);
const CLI = builtFile("cli/main.js");

/**
 * The scheduler's side of a slot: records due times that do not run, and
 * launches the ones that do in a worker (ops/jobs/launch) in the profile's
 * access order, then reads the job's health again and logs `job.failing`
 * once it has failed `scheduler.alertAfter` times in a row.
 */
export function runLauncher(ctx: {
  home: string;
  access: ProfileAccess;
  health: HealthTracker;
  log: Log;
  config: () => HearthConfig;
  stopping: AbortSignal;
}): SlotRuns {
  const { home, access, health, log, stopping } = ctx;
  return {
    stopping: () => stopping.aborted,
    record: (slot, { scheduledAt, outcome, note, trigger }) =>
      void access
        .shared(slot.profile, (s) =>
          s.runs.record({
            job: slot.job.name,
            profile: slot.profile,
            trigger,
            scheduledAt,
            outcome,
            note,
          }),
        )
        .catch((err: unknown) =>
          log.error({
            event: "run.unrecorded",
            job: slot.job.name,
            profile: slot.profile,
            scheduledAt,
            outcome,
            err: String(err),
          }),
        ),
    launch: (slot, scheduledAt, trigger, run) => {
      const { job, profile } = slot;
      return access
        .turn(profile, STRUCTURAL.has(job.kind), () =>
          launchJob({
            home,
            profile,
            job,
            trigger,
            scheduledAt,
            worker: { command: process.execPath, args: [CLI] },
            withStore: (fn) => access.open(profile, fn),
            stopping,
            onEvent: (event, fields) => {
              if (event === "run.started") run.started(Number(fields.id), Number(fields.pid));
              log.info({ event, ...fields });
            },
          }),
        )
        .then(async (report: LaunchReport) => {
          run.ended();
          await health.refresh(profile);
          // Another host's run of this due time: that scheduler alerts on it, not this one.
          if (report.claimedBy) return;
          const h = health.failing(
            job.name,
            profile,
            report.outcome,
            ctx.config().scheduler.alertAfter,
          );
          if (h) {
            log.error(
              {
                event: "job.failing",
                job: job.name,
                profile,
                consecutiveFailures: h.consecutiveFailures,
                lastOutcome: h.lastOutcome,
                lastErrorCode: h.lastErrorCode,
                lastSuccessAt: h.lastSuccessAt,
                holders: report.holders.map((x) => x.pid),
              },
              `job ${job.name} on ${profile} has not succeeded for ${h.consecutiveFailures} runs (last: ${h.lastOutcome})`,
            );
          }
        })
        .catch((err: unknown) => {
          run.ended();
          if (!stopping.aborted)
            log.error(
              { event: "run.error", job: job.name, profile, err: String(err) },
              "the run could not be launched or recorded",
            );
        });
    },
  };
}

import { Cron } from "croner";
import type { z as Z } from "zod";
import { JOB_KINDS } from "./job-kinds.js";
import { once } from "./once.js";
import { int, z } from "./zod.js";

// The scheduler's section of the configuration (schema.ts): its own
// settings and the jobs it runs, each checked against croner.

export const JOB_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** True when croner accepts the pattern (5 or 6 fields; seconds first) in the time zone. */
export function cronProblem(schedule: string, timezone?: string): string | undefined {
  try {
    new Cron(schedule, { paused: true, ...(timezone ? { timezone } : {}) }).nextRun();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export const jobSchema = once(() =>
  z
    .object({
      name: z.string().regex(JOB_NAME, "use 1-64 lowercase letters, digits, - or _"),
      /** Cron expression: 5 fields, or 6 with seconds first ("*\/10 * * * * *"). */
      schedule: z.string().min(1),
      kind: z.enum(JOB_KINDS),
      /** For kind "command": run by /bin/sh -c with HEARTH_HOME and HEARTH_PROFILE set. */
      command: z.string().min(1).optional(),
      /** IANA time zone the schedule is read in (default: the host's). */
      timezone: z.string().min(1).optional(),
      enabled: z.boolean().default(true),
      /** Spread runs of many profiles due at one instant over up to this long (fixed per job and profile). */
      jitterMs: int(0, 3_600_000).default(0),
      /** A run still going after this long is killed (its process group) and recorded failed. */
      timeoutMs: int(100, 7 * 24 * 3_600_000).default(3_600_000),
      /** Extra attempts after a failed run (never after a refusal); each waits until the last is dead. */
      retries: int(0, 10).default(0),
      retryDelayMs: int(0, 3_600_000).default(30_000),
      /** prune, delete-empty: age in days (defaults 90 and 1). */
      olderThanDays: z.number().min(0).max(36_500).optional(),
      /** Profiles it runs on (default: every profile the scheduler serves). */
      profiles: z.array(z.string().min(1)).optional(),
      /**
       * optimize: run it through a maintenance window (M5), parking the gateway
       * and dashboard for its length; false refuses (recorded refused) while
       * any other writer holds the store.
       */
      window: z.boolean().default(true),
      /** Run once at start when due times passed while no scheduler ran (the rest are recorded missed). */
      catchUp: z.boolean().default(true),
    })
    .strict()
    .superRefine((job, ctx) => {
      const problem = cronProblem(job.schedule, job.timezone);
      if (problem) {
        ctx.addIssue({
          code: "custom",
          path: ["schedule"],
          message: `not a cron expression croner accepts${job.timezone ? ` in ${job.timezone}` : ""}: ${problem}`,
        });
      }
      if (job.kind === "command" && !job.command)
        ctx.addIssue({
          code: "custom",
          path: ["command"],
          message: 'kind "command" needs a command',
        });
      if (job.kind !== "command" && job.command)
        ctx.addIssue({
          code: "custom",
          path: ["command"],
          message: `only kind "command" takes a command`,
        });
    }),
);
export type JobConfig = Z.infer<ReturnType<typeof jobSchema>>;
export type JobConfigInput = Z.input<ReturnType<typeof jobSchema>>;

export const schedulerSchema = once(() =>
  z
    .object({
      /** Loopback port of the scheduler's /status and /metrics; 0 picks a free one. */
      port: int(0, 65535).default(8789),
      /** How long SIGTERM waits for running workers before recording them unknown. */
      drainMs: int(0, 3_600_000).default(30_000),
      /** Consecutive refused or failed runs of a job that raise a doctor finding and an error log line. */
      alertAfter: int(1, 1000).default(3),
      jobs: z
        .array(jobSchema())
        .default([])
        .superRefine((jobs, ctx) => {
          const seen = new Set<string>();
          jobs.forEach((job, i) => {
            if (seen.has(job.name))
              ctx.addIssue({
                code: "custom",
                path: [i, "name"],
                message: `duplicate job name ${JSON.stringify(job.name)}`,
              });
            seen.add(job.name);
          });
        }),
    })
    .strict(),
);

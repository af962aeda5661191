import type { HearthConfig } from "../../config/schema.js";
import type { JobHealth } from "../../store/runs.js";
import type { Finding } from "./finding.js";

/**
 * Scheduled jobs that keep not doing their work (M4, seed 004): a job whose
 * last `scheduler.alertAfter` runs or more were refused, failed or unknown
 * is an error naming the last reason; a configured job that succeeded once
 * but not for `alertAfter` due times since (missed, skipped) is a warning.
 * The cron engine is loaded only when a job has a success to count from:
 * `hearth doctor` on a store without runs never pays for it.
 */
export async function jobFindings(
  jobs: readonly JobHealth[],
  config: HearthConfig,
  profile: string,
  now: number,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const threshold = config.scheduler.alertAfter;
  for (const h of jobs.filter((j) => j.profile === profile)) {
    if (h.consecutiveFailures >= threshold) {
      findings.push({
        code: "job_failing",
        severity: "error",
        message: `scheduled job ${h.job} has not succeeded in its last ${h.consecutiveFailures} runs (last: ${h.lastOutcome}${h.lastErrorCode ? ` ${h.lastErrorCode}` : ""}; last success: ${h.lastSuccessAt ?? "never"})`,
        fix: `hearth cron runs ${h.job}   # shows why (refusals name the holder)`,
      });
      continue;
    }
    const job = config.scheduler.jobs.find((j) => j.name === h.job && j.enabled);
    if (!job || !h.lastSuccessAt) continue;
    const { periodsSince } = await import("../jobs/due.js");
    const periods = periodsSince(job, Date.parse(h.lastSuccessAt), now);
    if (periods > threshold) {
      findings.push({
        code: "job_stale",
        severity: "warning",
        message: `scheduled job ${h.job} last succeeded ${h.lastSuccessAt}, ${periods} due times ago`,
        fix: "check that a scheduler runs (hearth start, or hearth scheduler run), then hearth cron runs",
      });
    }
  }
  return findings;
}

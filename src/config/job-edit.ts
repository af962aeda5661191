import { HearthError } from "../errors.js";
import type { HearthConfig, JobConfigInput } from "./schema.js";

/** The jobs list of the raw config file, created when absent. */
export function jobsOf(raw: Record<string, unknown>): JobConfigInput[] {
  raw.scheduler ??= {};
  const scheduler = raw.scheduler as Record<string, unknown>;
  scheduler.jobs ??= [];
  return scheduler.jobs as JobConfigInput[];
}

export function jobNotFound(name: string): HearthError {
  return new HearthError(
    "HEARTH_JOB_NOT_FOUND",
    `no scheduled job is named ${JSON.stringify(name)}`,
    {
      resource: name,
      hint: "hearth cron list",
    },
  );
}

/**
 * Pause (`enabled: false`) or resume a job in config.json, the file the
 * scheduler reads (and re-reads when it changes): `hearth cron
 * pause|resume` and the dashboard's Jobs page. HEARTH_JOB_NOT_FOUND
 * changes nothing. Returns the job as the validated file now has it.
 */
export async function setJobEnabled(
  home: string,
  name: string,
  enabled: boolean,
): Promise<HearthConfig["scheduler"]["jobs"][number]> {
  // Loaded when used: the CLI's start stays light.
  const { editConfig } = await import("./edit.js");
  const config = await editConfig(home, (raw) => {
    const job = jobsOf(raw).find((j) => j.name === name);
    if (!job) throw jobNotFound(name);
    job.enabled = enabled;
  });
  return config.scheduler.jobs.find((j) => j.name === name)!;
}

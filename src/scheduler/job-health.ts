import type { JobHealth, RunOutcome } from "../store/runs.js";
import { type JobSlot, slotKey } from "./job-slot.js";
import { type JobStatus, jobStatus } from "./status.js";

/** What /status shows of a job on a profile besides its health: its configuration and what runs now. */
type Shown = Pick<JobSlot, "job" | "profile" | "running">;

/**
 * The jobs' recorded health as the scheduler last read it from each
 * profile's store (runs.health()): what /status and /metrics report, and
 * whether a run that just ended makes its job one to alert on.
 */
export class HealthTracker {
  private readonly byJob = new Map<string, JobHealth>();

  /** `read(profile)`: the health of every job with recorded runs on that profile. */
  constructor(private readonly read: (profile: string) => Promise<JobHealth[]>) {}

  /** Read the profile's health again (after a run, at startup). */
  async refresh(profile: string): Promise<void> {
    for (const h of await this.read(profile)) this.byJob.set(slotKey(h.job, h.profile), h);
  }

  get(job: string, profile: string): JobHealth | undefined {
    return this.byJob.get(slotKey(job, profile));
  }

  /**
   * The health to alert on once a run with this outcome ended (health
   * refreshed): the job has failed `alertAfter` times or more in a row and
   * this run did not succeed; otherwise undefined.
   */
  failing(
    job: string,
    profile: string,
    outcome: RunOutcome,
    alertAfter: number,
  ): JobHealth | undefined {
    const h = this.get(job, profile);
    return h && h.consecutiveFailures >= alertAfter && outcome !== "ok" ? h : undefined;
  }

  /** One entry per job and profile shown, as /status and /metrics report them. */
  status(shown: Iterable<Shown>, alertAfter: number, now: number): JobStatus[] {
    return [...shown].map((s) => jobStatus(s, this.get(s.job.name, s.profile), alertAfter, now));
  }
}

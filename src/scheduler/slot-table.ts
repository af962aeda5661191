import type { HearthConfig } from "../config/schema.js";
import { JobSlot, type SlotRuns, slotKey } from "./job-slot.js";

/**
 * Every enabled job of config.json on every served profile it names, one
 * JobSlot each. At startup a slot resumes from the newest due time its
 * profile's store recorded (so the gap since is caught up); on a reload a
 * slot whose schedule and timezone did not change keeps its place and its
 * run in flight, any other starts from now.
 */
export class SlotTable {
  private readonly slots = new Map<string, JobSlot>();

  constructor(
    private readonly profiles: string[],
    private readonly runs: SlotRuns,
    /** The newest due time recorded for the job on the profile, or null. */
    private readonly lastScheduled: (job: string, profile: string) => Promise<number | null>,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  values(): IterableIterator<JobSlot> {
    return this.slots.values();
  }

  /** Build the slots of `config` at startup, and handle what was due while no scheduler ran. */
  start(config: HearthConfig): Promise<void> {
    return this.add(config, true, new Map());
  }

  /** Replace the slots with those of `next` (config.json changed). */
  reload(next: HearthConfig): Promise<void> {
    const old = new Map(this.slots);
    this.disarm();
    this.slots.clear();
    return this.add(next, false, old);
  }

  /** Stop every timer. */
  disarm(): void {
    for (const s of this.slots.values()) s.disarm();
  }

  private async add(c: HearthConfig, startup: boolean, keep: Map<string, JobSlot>): Promise<void> {
    for (const job of c.scheduler.jobs.filter((j) => j.enabled)) {
      for (const profile of job.profiles ?? this.profiles) {
        if (!this.profiles.includes(profile)) continue;
        const k = slotKey(job.name, profile);
        const previous = keep.get(k);
        let lastHandled = Date.now();
        if (startup) {
          const recorded = await this.lastScheduled(job.name, profile);
          if (recorded !== null) lastHandled = recorded;
        } else if (
          previous &&
          previous.job.schedule === job.schedule &&
          previous.job.timezone === job.timezone
        ) {
          lastHandled = previous.lastHandled;
        }
        const slot = new JobSlot(job, profile, lastHandled, this.runs);
        slot.adopt(previous);
        this.slots.set(k, slot);
        if (startup) slot.tick(true);
        else slot.arm();
      }
    }
  }
}

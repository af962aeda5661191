import type { JobSlot } from "./job-slot.js";
import type { Log } from "./log.js";

/**
 * The end of a stopping scheduler's runs: wait for the launches in flight
 * up to `drainMs`, then record each run whose worker still runs as
 * abandoned (unknown, not replayed). Returns the abandoned run ids.
 */
export async function drainRuns(
  slots: JobSlot[],
  opts: {
    drainMs: number;
    /** Record the run abandoned in its profile's store. */
    abandon: (slot: JobSlot, id: number, note: string) => Promise<void>;
    log: Log;
  },
): Promise<number[]> {
  const inFlight = slots.map((s) => s.inFlight).filter(Boolean);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(inFlight),
    new Promise((r) => {
      timer = setTimeout(r, opts.drainMs);
    }),
  ]);
  clearTimeout(timer);
  const abandoned: number[] = [];
  for (const s of slots) {
    if (!s.inFlight || !s.running) continue;
    const { id, pid } = s.running;
    try {
      await opts.abandon(
        s,
        id,
        `the scheduler stopped after ${opts.drainMs} ms while worker pid ${pid} still ran; not replayed`,
      );
      abandoned.push(id);
      opts.log.warn({ event: "run.abandoned", job: s.job.name, profile: s.profile, run: id, pid });
    } catch (err) {
      opts.log.error({
        event: "run.unrecorded",
        job: s.job.name,
        profile: s.profile,
        run: id,
        err: String(err),
      });
    }
  }
  return abandoned;
}

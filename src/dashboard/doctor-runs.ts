import { childError, runHearth } from "./child-ops.js";

export interface DoctorRun {
  startedAt: number;
  finishedAt: number | null;
  report: unknown;
  error: unknown;
}

/** What the health page shows of a profile's doctor: the last finished run, its age, and whether one runs now. */
export interface DoctorView extends DoctorRun {
  /** Milliseconds since the shown run finished (null while the first run is under way). */
  ageMs: number | null;
  running: boolean;
}

/**
 * The dashboard's doctor runs, per profile: each a child `hearth --json
 * doctor` (read-only, off the event loop), one at a time per profile. The
 * last finished run stays shown while the next one runs. Health stays
 * current (issue 47): every `everyMs` (0: never) a timer re-runs doctor on
 * every profile, and a read of the health page re-runs it when the last
 * run is older than `freshMs`.
 */
export class DoctorRuns {
  private readonly last = new Map<string, DoctorRun>();
  private readonly current = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly home: string,
    private readonly options: { everyMs: number; freshMs: number },
  ) {}

  /** Re-run doctor on these profiles every `everyMs` (unref'd: it never keeps the process up). */
  start(profiles: () => readonly string[]): void {
    if (this.options.everyMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      for (const p of profiles()) void this.run(p);
    }, this.options.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Run doctor now (or join the run under way); resolves when it finished. */
  run(profile: string): Promise<void> {
    const running = this.current.get(profile);
    if (running) return running;
    const run: DoctorRun = { startedAt: Date.now(), finishedAt: null, report: null, error: null };
    const done = runHearth(this.home, profile, ["doctor"])
      .then((result) => {
        // doctor exits 4 when it found problems: its report is still the answer.
        if ((result.code === 0 || result.code === 4) && result.json) run.report = result.json;
        else run.error = childError("hearth doctor", result).toJSON();
      })
      .catch((err: unknown) => {
        run.error = { code: "HEARTH_INTERNAL", message: String(err) };
      })
      .finally(() => {
        run.finishedAt = Date.now();
        this.last.set(profile, run);
        this.current.delete(profile);
      });
    this.current.set(profile, done);
    return done;
  }

  /** The profile's doctor as a page reads it; starts a run when none is recent enough. */
  view(profile: string): DoctorView | null {
    const last = this.last.get(profile);
    const now = Date.now();
    if (!last || (last.finishedAt !== null && now - last.finishedAt > this.options.freshMs))
      void this.run(profile);
    const running = this.current.has(profile);
    if (!last) return running ? { ...pendingRun(), ageMs: null, running } : null;
    return { ...last, ageMs: last.finishedAt === null ? null : now - last.finishedAt, running };
  }

  /** The last finished run (after run()). */
  latest(profile: string): DoctorRun | undefined {
    return this.last.get(profile);
  }
}

function pendingRun(): DoctorRun {
  return { startedAt: Date.now(), finishedAt: null, report: null, error: null };
}

import type { JobConfig } from "../config/schema.js";
import { jitterFor, nextDue } from "../ops/jobs/due.js";
import { type NotRun, planDue, type Trigger } from "./catch-up.js";

/** What a slot asks of the scheduler: record a due time that does not run, launch one that does. */
export interface SlotRuns {
  /** Record a due time without a run (errors are the callee's to log). */
  record(slot: JobSlot, entry: NotRun): void;
  /**
   * Run the job for one due time; settles when the run is over and its
   * bookkeeping done. `run.started` once a worker runs it, `run.ended`
   * when it exited (before that bookkeeping).
   */
  launch(slot: JobSlot, scheduledAt: number, trigger: Trigger, run: RunHandle): Promise<unknown>;
  /** True once the scheduler stops: a timer that fires then does nothing. */
  stopping(): boolean;
}

export interface RunHandle {
  started(id: number, pid: number): void;
  ended(): void;
}

/** A launch in progress (waiting for its turn or running); shared with the slot that replaces this one. */
interface InFlight {
  done: Promise<unknown>;
  /** Run id and worker pid once started. */
  running: { id: number; pid: number } | undefined;
  /** Over: the launch settled. */
  settled: boolean;
}

/** The key of one job on one profile. */
export function slotKey(job: string, profile: string): string {
  return `${job}\0${profile}`;
}

/**
 * One job on one profile: its timer, the run in flight, and where its due
 * times stand (`lastHandled`). Each due time is handled once (planDue):
 * run, or recorded missed or skipped.
 */
export class JobSlot {
  private timer: NodeJS.Timeout | undefined;
  private run: InFlight | undefined;

  constructor(
    readonly job: JobConfig,
    readonly profile: string,
    public lastHandled: number,
    private readonly runs: SlotRuns,
  ) {}

  /** The launch in progress, if any. */
  get inFlight(): Promise<unknown> | undefined {
    return this.current()?.done;
  }

  /** Run id and worker pid of the run in progress, once started. */
  get running(): { id: number; pid: number } | undefined {
    return this.current()?.running;
  }

  /**
   * Take over the run in flight of the slot this one replaces (config.json
   * was reloaded): the same run, so this slot sees it start and end.
   */
  adopt(previous: JobSlot | undefined): void {
    this.run = previous?.current();
  }

  /** Handle every due time up to now, then wait for the next one. */
  tick(startup: boolean): void {
    this.timer = undefined;
    if (this.runs.stopping()) return;
    const run = this.current();
    const busy = run ? { pid: run.running?.pid } : undefined;
    const plan = planDue(this.job, this.lastHandled, Date.now(), { startup, busy });
    this.lastHandled = plan.lastHandled;
    for (const entry of plan.notRun) this.runs.record(this, entry);
    if (plan.run) this.start(plan.run.scheduledAt, plan.run.trigger);
    this.arm();
  }

  /** Set the timer for the next due time (plus the job's jitter on this profile). */
  arm(): void {
    const next = nextDue(this.job, Math.max(this.lastHandled, Date.now() - 1000));
    if (next === null) return;
    const delay = Math.max(0, next + jitterFor(this.job, this.profile) - Date.now());
    this.timer = setTimeout(() => this.tick(false), Math.min(delay, 2 ** 31 - 1));
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private start(scheduledAt: number, trigger: Trigger): void {
    const run: InFlight = { done: Promise.resolve(), running: undefined, settled: false };
    this.run = run;
    run.done = this.runs
      .launch(this, scheduledAt, trigger, {
        started: (id, pid) => {
          run.running = { id, pid };
        },
        ended: () => {
          run.running = undefined;
        },
      })
      .finally(() => {
        run.settled = true;
        if (this.run === run) this.run = undefined;
      });
  }

  /** The run in flight, forgotten once it settled (it may have been started by the slot this one replaced). */
  private current(): InFlight | undefined {
    if (this.run?.settled) this.run = undefined;
    return this.run;
  }
}

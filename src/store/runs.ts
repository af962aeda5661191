/**
 * The record of scheduled job runs (M4), backend-neutral: the run and
 * health shapes and the rules (which earlier run
 * blocks a new one, which running rows are orphans and what their note
 * says, defaults and limits). The statements are sqlite/runs.ts and
 * pg/runs.ts (RunsSql); the rows they read and write, run-rows.ts.
 */
import { type Row, toJobHealth, toRun } from "./run-rows.js";

/** Every outcome a scheduled run can have; `running` only while it may still be alive. */
export const RUN_OUTCOMES = [
  "running",
  "ok",
  "refused",
  "failed",
  "skipped",
  "missed",
  "unknown",
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];
export type RunTrigger = "schedule" | "catch-up" | "manual" | "retry";

/** A process as recorded in a run row (P1 identity: pid, start ticks, boot). */
export interface RunProcess {
  pid: number;
  startTicks: number;
  bootId: string;
}

export interface RunHolder {
  pid: number;
  kind: string;
  commandLine?: string | null;
  since?: string | null;
}

export interface JobRun {
  id: number;
  job: string;
  profile: string;
  trigger: RunTrigger;
  attempt: number;
  scheduledAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  outcome: RunOutcome;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  errorCode: string | null;
  holders: RunHolder[];
  note: string | null;
  outputTail: string | null;
  worker: { pid: number; startTicks: number } | null;
  launcher: { pid: number; startTicks: number } | null;
  bootId: string | null;
}

/** The last outcome and last success of one job on one profile. */
export interface JobHealth {
  job: string;
  profile: string;
  lastOutcome: RunOutcome;
  lastScheduledAt: string;
  lastSuccessAt: string | null;
  /** Refused, failed or unknown runs since the last success (missed and skipped runs are not counted). */
  consecutiveFailures: number;
  /** Whether the failures are all refusals. */
  lastErrorCode: string | null;
}

export interface BeginRun {
  job: string;
  profile: string;
  trigger: RunTrigger;
  attempt?: number;
  scheduledAt: number;
  launcher: RunProcess;
}

export type BeginResult = { started: true; id: number } | { started: false; blocking: JobRun };

export interface FinishRun {
  outcome: Exclude<RunOutcome, "running" | "missed" | "skipped">;
  exitCode?: number | null;
  signal?: string | null;
  errorCode?: string | null;
  holders?: RunHolder[];
  note?: string | null;
  outputTail?: string | null;
}

/** A run to insert as `running`, its defaults applied. */
export interface NewRun extends BeginRun {
  attempt: number;
}

/** The columns finish() writes (holders as JSON text, null when none). */
export interface FinishValues {
  outcome: FinishRun["outcome"];
  exitCode: number | null;
  signal: string | null;
  errorCode: string | null;
  holders: string | null;
  note: string | null;
  outputTail: string | null;
}

/** A due time that did not run, as record() inserts it. */
export interface RecordValues {
  job: string;
  profile: string;
  trigger: RunTrigger;
  scheduledAt: number;
  outcome: "missed" | "skipped";
  note: string | null;
  errorCode: string | null;
}

/** What a backend does for Runs: the statements and transactions, no rule. */
export interface RunsSql {
  /**
   * One transaction, one at a time per (job, profile): read the runs of the
   * job and profile recorded in `run.launcher.bootId` as `running` or
   * `unknown`, newest first; unless `blocking` picks one of them, insert
   * `run` as `running`, started now.
   */
  begin(
    run: NewRun,
    blocking: (active: Row[]) => Row | undefined,
  ): Promise<{ id: number } | { blocking: Row }>;
  /** Set the worker of `id` while it is `running`. */
  attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void>;
  /** Write the outcome, finished now, the duration since started_at. */
  finish(id: number, values: FinishValues): Promise<void>;
  /** Insert a run that never started; its id. */
  record(values: RecordValues): Promise<number>;
  /**
   * One transaction: the `running` rows (locked where the engine can), the
   * ones `orphaned` picks marked `unknown` with `note(row)` if still
   * running; returns those rows as they were read.
   */
  markOrphans(orphaned: (row: Row) => boolean, note: (row: Row) => string): Promise<Row[]>;
  /** Mark `id` unknown with `note` if it is still running. */
  abandon(id: number, note: string): Promise<void>;
  /** max(scheduled_at) of the job's non-manual runs on the profile. */
  lastScheduled(job: string, profile: string): Promise<number | null>;
  /** Newest first, at most `limit`, of one job when `job` is given. */
  list(job: string | undefined, limit: number): Promise<Row[]>;
  get(id: number): Promise<Row | undefined>;
  /** The rows of JOB_HEALTH_SQL. */
  health(): Promise<Record<string, unknown>[]>;
}

/** Runs list() returns when no limit is given. */
const DEFAULT_RUNS_PAGE = 50;

/**
 * The record of scheduled job runs (M4): a run is written `running` before
 * its worker may start and finished with the outcome its exit code proves.
 * One job never has two runs that may be alive at once: begin() refuses
 * while an earlier run's process may still live (the caller decides that
 * from P1 identities), inside the same transaction that records the new run.
 */
export class Runs {
  constructor(private readonly sql: RunsSql) {}

  /**
   * Record a new run as `running`, unless a run of the same job and profile
   * recorded in this boot as `running` or `unknown` may still be alive
   * (`mayBeAlive` says so for its worker, or, when it has no worker yet, for
   * its launcher). Check and insert are one transaction (IMMEDIATE on
   * SQLite; on PostgreSQL under an advisory lock on the job and profile).
   */
  async begin(run: BeginRun, mayBeAlive: (p: RunProcess) => boolean): Promise<BeginResult> {
    const outcome = await this.sql.begin({ ...run, attempt: run.attempt ?? 1 }, (active) =>
      blockingRun(active, mayBeAlive),
    );
    return "id" in outcome
      ? { started: true, id: outcome.id }
      : { started: false, blocking: toRun(outcome.blocking) };
  }

  /** The worker of a running run, recorded before it is let go (its identity is what proves it dead later). */
  async attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void> {
    await this.sql.attachWorker(id, worker);
  }

  /** Finish a run with the outcome its worker's exit proved. */
  async finish(id: number, result: FinishRun): Promise<void> {
    await this.sql.finish(id, {
      outcome: result.outcome,
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      errorCode: result.errorCode ?? null,
      holders: result.holders && result.holders.length > 0 ? JSON.stringify(result.holders) : null,
      note: result.note ?? null,
      outputTail: result.outputTail ?? null,
    });
  }

  /** Record a due time that did not run: `missed` (downtime) or `skipped` (the previous run may still be alive). */
  async record(entry: {
    job: string;
    profile: string;
    trigger: RunTrigger;
    scheduledAt: number;
    outcome: "missed" | "skipped";
    note?: string;
  }): Promise<number> {
    return this.sql.record({
      job: entry.job,
      profile: entry.profile,
      trigger: entry.trigger,
      scheduledAt: entry.scheduledAt,
      outcome: entry.outcome,
      note: entry.note ?? null,
      // A skip is a refusal with its own code: an earlier run may still be alive.
      errorCode: entry.outcome === "skipped" ? "HEARTH_JOB_RUNNING" : null,
    });
  }

  /**
   * Runs left `running` by a launcher that is gone become `unknown`: nobody
   * saw how they ended, and they are never replayed. Returns them.
   */
  async markOrphans(launcherDead: (p: RunProcess) => boolean): Promise<JobRun[]> {
    const orphans = await this.sql.markOrphans((row) => {
      const launcher = launcherOf(row);
      return launcher === undefined || launcherDead(launcher);
    }, orphanNote);
    return orphans.map((r) => ({ ...toRun(r), outcome: "unknown" as const }));
  }

  /** Mark one run `unknown` (its worker outlived the launcher's patience). */
  async abandon(id: number, note: string): Promise<void> {
    await this.sql.abandon(id, note);
  }

  /** The latest due time recorded for a job on a profile (any outcome), or null. */
  async lastScheduled(job: string, profile: string): Promise<number | null> {
    return this.sql.lastScheduled(job, profile);
  }

  /** Runs, newest first. */
  async list(options: { job?: string; limit?: number } = {}): Promise<JobRun[]> {
    const limit = options.limit ?? DEFAULT_RUNS_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    return (await this.sql.list(options.job, limit)).map(toRun);
  }

  async get(id: number): Promise<JobRun | null> {
    const row = await this.sql.get(id);
    return row ? toRun(row) : null;
  }

  /** Last outcome, last success and consecutive failures of every job with runs. */
  async health(): Promise<JobHealth[]> {
    return (await this.sql.health()).map(toJobHealth);
  }
}

/** The process that proves a run alive: its worker, or its launcher before it has one. */
function processOf(row: Row): RunProcess | undefined {
  if (row.boot_id === null) return undefined;
  if (row.worker_pid !== null && row.worker_start_ticks !== null)
    return { pid: row.worker_pid, startTicks: row.worker_start_ticks, bootId: row.boot_id };
  if (row.launcher_pid !== null && row.launcher_start_ticks !== null)
    return { pid: row.launcher_pid, startTicks: row.launcher_start_ticks, bootId: row.boot_id };
  return undefined;
}

/** The first of `active` (newest first) whose process may still be alive: it blocks a new run. */
function blockingRun(
  active: readonly Row[],
  mayBeAlive: (p: RunProcess) => boolean,
): Row | undefined {
  return active.find((row) => {
    const p = processOf(row);
    return p !== undefined && mayBeAlive(p);
  });
}

/** The launcher recorded in a run row, when it was recorded whole. */
function launcherOf(r: Row): RunProcess | undefined {
  return r.launcher_pid !== null && r.launcher_start_ticks !== null && r.boot_id !== null
    ? { pid: r.launcher_pid, startTicks: r.launcher_start_ticks, bootId: r.boot_id }
    : undefined;
}

/** The note of a run whose launcher died. */
function orphanNote(r: Row): string {
  return `its launcher (pid ${r.launcher_pid ?? "?"}) died while it ran${r.worker_pid ? ` in worker pid ${r.worker_pid}` : " before its worker started"}; not replayed`;
}

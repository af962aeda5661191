/**
 * The record of scheduled job runs (M4), backend-neutral: the run and
 * health shapes, defaults and limits, and the rules applied (run-rules.ts:
 * which due time is claimed, which earlier run blocks a new one, which
 * running rows are abandoned or orphans and what their note says). The
 * statements are sqlite/runs.ts and pg/runs.ts (RunsSql); the rows they
 * read and write, run-rows.ts.
 */

import { type Row, toJobHealth, toRun } from "./run-rows.js";
import {
  type BeginFound,
  type BeginVerdict,
  beginVerdict,
  claims,
  isOrphan,
  orphanNote,
} from "./run-rules.js";

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

export type BeginResult =
  | { started: true; id: number }
  /** A scheduler (on this host or another) already recorded this due time: nothing to do. */
  | { started: false; claimedBy: JobRun }
  | { started: false; blocking: JobRun };

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
   * One transaction, one at a time per (job, profile) on every host: read
   * what `decide` needs (BeginFound: on PostgreSQL the active rows of every
   * boot, each with `present`), then act on its verdict: return the claim
   * or the blocking row, or mark the rows to abandon `unknown` (if still
   * running) and insert `run` as `running`, started now.
   */
  begin(
    run: NewRun,
    decide: (found: BeginFound) => BeginVerdict,
  ): Promise<{ id: number } | { claimedBy: Row } | { blocking: Row }>;
  /** Set the worker of `id` while it is `running`. */
  attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void>;
  /** Write the outcome, finished now, the duration since started_at. */
  finish(id: number, values: FinishValues): Promise<void>;
  /**
   * Insert a run that never started; its id. When `claim`, in the same
   * transaction as begin()'s and only if no row of a scheduler has the same
   * job, profile and due time yet: else nothing, and null.
   */
  record(values: RecordValues, claim: boolean): Promise<number | null>;
  /**
   * One transaction: the `running` rows (locked where the engine can; on
   * PostgreSQL each with `present`), the ones `orphaned` picks marked
   * `unknown` with `note(row)` if still running; returns those rows as they
   * were read.
   */
  markOrphans(orphaned: (row: Row) => boolean, note: (row: Row) => string): Promise<Row[]>;
  /** Mark `id` unknown with `note` if it is still running. */
  abandon(id: number, note: string): Promise<void>;
  /**
   * Hold `self`'s presence until the returned function is called: what
   * proves its runs alive to other hosts (PostgreSQL); nothing on SQLite.
   */
  holdPresence(self: RunProcess): Promise<() => Promise<void>>;
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
   * Record a new run as `running`, unless its due time is already claimed
   * (a scheduler, on any host, recorded a run or a miss or skip of this
   * job, profile and due time: one record per due time) or a run of the
   * same job and profile may still be alive: the server says its launcher
   * or worker holds its presence (PostgreSQL), or it ran in this boot and
   * `mayBeAlive` says so for its worker, or, when it has no worker yet, for
   * its launcher. A running run the server proves ownerless is recorded
   * abandoned (`unknown`) on the way. Check and insert are one transaction
   * (IMMEDIATE on SQLite; on PostgreSQL under an advisory lock on the job
   * and profile, taken by every host).
   */
  async begin(run: BeginRun, mayBeAlive: (p: RunProcess) => boolean): Promise<BeginResult> {
    const full: NewRun = { ...run, attempt: run.attempt ?? 1 };
    const outcome = await this.sql.begin(full, (found) => beginVerdict(full, found, mayBeAlive));
    if ("id" in outcome) return { started: true, id: outcome.id };
    return "claimedBy" in outcome
      ? { started: false, claimedBy: toRun(outcome.claimedBy) }
      : { started: false, blocking: toRun(outcome.blocking) };
  }

  /**
   * Hold `self`'s presence (PostgreSQL: a lock on a connection of its own)
   * before beginning runs as it, until the returned function is called:
   * other hosts judge its runs alive by it. Nothing to hold on SQLite.
   */
  async holdPresence(self: RunProcess): Promise<() => Promise<void>> {
    return this.sql.holdPresence(self);
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

  /**
   * Record a due time that did not run: `missed` (downtime) or `skipped`
   * (the previous run may still be alive). A scheduler's record claims the
   * due time like a run: when one is already recorded (by a scheduler on
   * another host), nothing is written and the result is null.
   */
  async record(entry: {
    job: string;
    profile: string;
    trigger: RunTrigger;
    scheduledAt: number;
    outcome: "missed" | "skipped";
    note?: string;
  }): Promise<number | null> {
    return this.sql.record(
      {
        job: entry.job,
        profile: entry.profile,
        trigger: entry.trigger,
        scheduledAt: entry.scheduledAt,
        outcome: entry.outcome,
        note: entry.note ?? null,
        // A skip is a refusal with its own code: an earlier run may still be alive.
        errorCode: entry.outcome === "skipped" ? "HEARTH_JOB_RUNNING" : null,
      },
      claims(entry.trigger),
    );
  }

  /**
   * Runs left `running` by a launcher that is gone become `unknown`: nobody
   * saw how they ended, and they are never replayed. A run whose launcher
   * or worker the server says is present (PostgreSQL, any host) is not
   * one. Returns them.
   */
  async markOrphans(launcherDead: (p: RunProcess) => boolean): Promise<JobRun[]> {
    const orphans = await this.sql.markOrphans((row) => isOrphan(row, launcherDead), orphanNote);
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

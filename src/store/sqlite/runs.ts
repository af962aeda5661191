import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

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

/** A job_runs row as SQLite returns it (the PG module converts its BIGINTs to this). */
export interface Row {
  id: number;
  job: string;
  profile: string;
  trigger: RunTrigger;
  attempt: number;
  scheduled_at: number;
  started_at: number | null;
  finished_at: number | null;
  outcome: RunOutcome;
  exit_code: number | null;
  signal: string | null;
  duration_ms: number | null;
  error_code: string | null;
  holders: string | null;
  note: string | null;
  output_tail: string | null;
  worker_pid: number | null;
  worker_start_ticks: number | null;
  launcher_pid: number | null;
  launcher_start_ticks: number | null;
  boot_id: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toRun(r: Row): JobRun {
  let holders: RunHolder[] = [];
  try {
    holders = r.holders ? (JSON.parse(r.holders) as RunHolder[]) : [];
  } catch {
    holders = [];
  }
  return {
    id: r.id,
    job: r.job,
    profile: r.profile,
    trigger: r.trigger,
    attempt: r.attempt,
    scheduledAt: new Date(r.scheduled_at).toISOString(),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    outcome: r.outcome,
    exitCode: r.exit_code,
    signal: r.signal,
    durationMs: r.duration_ms,
    errorCode: r.error_code,
    holders,
    note: r.note,
    outputTail: r.output_tail,
    worker:
      r.worker_pid === null || r.worker_start_ticks === null
        ? null
        : { pid: r.worker_pid, startTicks: r.worker_start_ticks },
    launcher:
      r.launcher_pid === null || r.launcher_start_ticks === null
        ? null
        : { pid: r.launcher_pid, startTicks: r.launcher_start_ticks },
    bootId: r.boot_id,
  };
}

/** Outcomes that count against a job in alerting (a refusal is never a success). */
const FAILING = "('refused', 'failed', 'unknown')";

/**
 * The health of every job with recorded runs, in one read. Exported so the
 * read-only diagnosis (doctor, on its snapshot) uses the same query.
 */
export const JOB_HEALTH_SQL = `
WITH last AS (
  SELECT job, profile, max(id) AS id FROM job_runs
  WHERE outcome NOT IN ('missed', 'skipped', 'running') GROUP BY job, profile
), success AS (
  SELECT job, profile, max(id) AS id, max(coalesce(finished_at, scheduled_at)) AS at FROM job_runs
  WHERE outcome = 'ok' GROUP BY job, profile
)
SELECT r.job, r.profile, r.outcome AS last_outcome, r.scheduled_at AS last_scheduled_at,
       r.error_code AS last_error_code, s.at AS last_success_at,
       (SELECT count(*) FROM job_runs f WHERE f.job = r.job AND f.profile = r.profile
          AND f.outcome IN ${FAILING} AND f.id > coalesce(s.id, 0)) AS consecutive_failures
FROM last l JOIN job_runs r ON r.id = l.id
LEFT JOIN success s ON s.job = l.job AND s.profile = l.profile
ORDER BY r.job, r.profile`;

export function toJobHealth(row: Record<string, unknown>): JobHealth {
  return {
    job: String(row.job),
    profile: String(row.profile),
    lastOutcome: row.last_outcome as RunOutcome,
    lastScheduledAt: new Date(Number(row.last_scheduled_at)).toISOString(),
    lastSuccessAt: row.last_success_at === null ? null : iso(Number(row.last_success_at)),
    consecutiveFailures: Number(row.consecutive_failures),
    lastErrorCode: (row.last_error_code as string | null) ?? null,
  };
}

/**
 * The record of scheduled job runs (M4): a run is written `running` before
 * its worker may start and finished with the outcome its exit code proves.
 * One job never has two runs that may be alive at once: begin() refuses
 * while an earlier run's process may still live (the caller decides that
 * from P1 identities), inside the same transaction that records the new run.
 */
export class Runs {
  constructor(private readonly access: Access) {}

  /**
   * Record a new run as `running`, unless a run of the same job and profile
   * recorded in this boot as `running` or `unknown` may still be alive
   * (`mayBeAlive` says so for its worker, or, when it has no worker yet, for
   * its launcher). Check and insert are one IMMEDIATE transaction.
   */
  async begin(run: BeginRun, mayBeAlive: (p: RunProcess) => boolean): Promise<BeginResult> {
    return this.access.writeTransaction((conn) => {
      const active = conn
        .stmt(
          `SELECT * FROM job_runs WHERE job = ? AND profile = ? AND outcome IN ('running', 'unknown')
           AND boot_id = ? ORDER BY id DESC`,
        )
        .all(run.job, run.profile, run.launcher.bootId) as Row[];
      for (const row of active) {
        const p = processOf(row);
        if (p && mayBeAlive(p)) return { started: false as const, blocking: toRun(row) };
      }
      const now = this.access.now();
      const id = Number(
        conn
          .stmt(
            `INSERT INTO job_runs (job, profile, trigger, attempt, scheduled_at, started_at, outcome,
               launcher_pid, launcher_start_ticks, boot_id)
             VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
          )
          .run(
            run.job,
            run.profile,
            run.trigger,
            run.attempt ?? 1,
            run.scheduledAt,
            now,
            run.launcher.pid,
            run.launcher.startTicks,
            run.launcher.bootId,
          ).lastInsertRowid,
      );
      return { started: true as const, id };
    });
  }

  /** The worker of a running run, recorded before it is let go (its identity is what proves it dead later). */
  async attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void> {
    await this.access.writeTransaction((conn) =>
      conn
        .stmt(
          "UPDATE job_runs SET worker_pid = ?, worker_start_ticks = ? WHERE id = ? AND outcome = 'running'",
        )
        .run(worker.pid, worker.startTicks, id),
    );
  }

  /** Finish a run with the outcome its worker's exit proved. */
  async finish(id: number, result: FinishRun): Promise<void> {
    await this.access.writeTransaction((conn) => {
      const now = this.access.now();
      conn
        .stmt(
          `UPDATE job_runs SET outcome = ?, finished_at = ?, duration_ms = ? - coalesce(started_at, ?),
             exit_code = ?, signal = ?, error_code = ?, holders = ?, note = ?, output_tail = ?
           WHERE id = ?`,
        )
        .run(
          result.outcome,
          now,
          now,
          now,
          result.exitCode ?? null,
          result.signal ?? null,
          result.errorCode ?? null,
          result.holders && result.holders.length > 0 ? JSON.stringify(result.holders) : null,
          result.note ?? null,
          result.outputTail ?? null,
          id,
        );
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
    return this.access.writeTransaction((conn) =>
      Number(
        conn
          .stmt(
            `INSERT INTO job_runs (job, profile, trigger, scheduled_at, outcome, note, error_code)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            entry.job,
            entry.profile,
            entry.trigger,
            entry.scheduledAt,
            entry.outcome,
            entry.note ?? null,
            // A skip is a refusal with its own code: an earlier run may still be alive.
            entry.outcome === "skipped" ? "HEARTH_JOB_RUNNING" : null,
          ).lastInsertRowid,
      ),
    );
  }

  /**
   * Runs left `running` by a launcher that is gone become `unknown`: nobody
   * saw how they ended, and they are never replayed. Returns them.
   */
  async markOrphans(launcherDead: (p: RunProcess) => boolean): Promise<JobRun[]> {
    return this.access.writeTransaction((conn) => {
      const rows = conn.stmt("SELECT * FROM job_runs WHERE outcome = 'running'").all() as Row[];
      const orphans = rows.filter((r) => {
        const launcher =
          r.launcher_pid !== null && r.launcher_start_ticks !== null && r.boot_id !== null
            ? { pid: r.launcher_pid, startTicks: r.launcher_start_ticks, bootId: r.boot_id }
            : undefined;
        return launcher === undefined || launcherDead(launcher);
      });
      const mark = conn.stmt(
        "UPDATE job_runs SET outcome = 'unknown', note = ? WHERE id = ? AND outcome = 'running'",
      );
      for (const r of orphans) {
        mark.run(
          `its launcher (pid ${r.launcher_pid ?? "?"}) died while it ran${r.worker_pid ? ` in worker pid ${r.worker_pid}` : " before its worker started"}; not replayed`,
          r.id,
        );
      }
      return orphans.map((r) => ({ ...toRun(r), outcome: "unknown" as const }));
    });
  }

  /** Mark one run `unknown` (its worker outlived the launcher's patience). */
  async abandon(id: number, note: string): Promise<void> {
    await this.access.writeTransaction((conn) =>
      conn
        .stmt(
          "UPDATE job_runs SET outcome = 'unknown', note = ? WHERE id = ? AND outcome = 'running'",
        )
        .run(note, id),
    );
  }

  /** The latest due time recorded for a job on a profile (any outcome), or null. */
  async lastScheduled(job: string, profile: string): Promise<number | null> {
    const row = this.access
      .read()
      .stmt(
        "SELECT max(scheduled_at) AS at FROM job_runs WHERE job = ? AND profile = ? AND trigger != 'manual'",
      )
      .get(job, profile) as { at: number | null };
    return row.at;
  }

  /** Runs, newest first. */
  async list(options: { job?: string; limit?: number } = {}): Promise<JobRun[]> {
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const rows = (
      options.job === undefined
        ? this.access.read().stmt("SELECT * FROM job_runs ORDER BY id DESC LIMIT +?").all(limit)
        : this.access
            .read()
            .stmt("SELECT * FROM job_runs WHERE job = ? ORDER BY id DESC LIMIT +?")
            .all(options.job, limit)
    ) as Row[];
    return rows.map(toRun);
  }

  async get(id: number): Promise<JobRun | null> {
    const row = this.access.read().stmt("SELECT * FROM job_runs WHERE id = ?").get(id) as
      | Row
      | undefined;
    return row ? toRun(row) : null;
  }

  /** Last outcome, last success and consecutive failures of every job with runs. */
  async health(): Promise<JobHealth[]> {
    return jobHealthOn(this.access.read());
  }
}

export function jobHealthOn(conn: Connection): JobHealth[] {
  return (conn.stmt(JOB_HEALTH_SQL).all() as Record<string, unknown>[]).map(toJobHealth);
}

export function processOf(row: Row): RunProcess | undefined {
  if (row.boot_id === null) return undefined;
  if (row.worker_pid !== null && row.worker_start_ticks !== null)
    return { pid: row.worker_pid, startTicks: row.worker_start_ticks, bootId: row.boot_id };
  if (row.launcher_pid !== null && row.launcher_start_ticks !== null)
    return { pid: row.launcher_pid, startTicks: row.launcher_start_ticks, bootId: row.boot_id };
  return undefined;
}

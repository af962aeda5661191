/**
 * Job run rows (M4) as both engines read and write them: the row shape, its
 * conversion to a JobRun, the health query and a new run's column order.
 * The rules over them are runs.ts.
 */
import type { JobHealth, JobRun, NewRun, RunHolder, RunOutcome, RunTrigger } from "./runs.js";

/** A job_runs row as SQLite returns it (pg/runs.ts converts its BIGINTs to this). */
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
  /**
   * Not a column: whether the server says the run's launcher or worker is
   * alive (PostgreSQL's presence locks, pg/run-presence.ts); undefined
   * where the engine has none (SQLite: /proc decides, one host by design).
   */
  present?: boolean;
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

/** A new run's values in the INSERT's column order (job, profile, trigger, attempt, scheduled_at, started_at, launcher_pid, launcher_start_ticks, boot_id). */
export function newRunRow(run: NewRun, now: number): unknown[] {
  const { launcher } = run;
  return [
    run.job,
    run.profile,
    run.trigger,
    run.attempt,
    run.scheduledAt,
    now,
    launcher.pid,
    launcher.startTicks,
    launcher.bootId,
  ];
}

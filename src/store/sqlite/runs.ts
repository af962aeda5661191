import { JOB_HEALTH_SQL, newRunRow, type Row } from "../run-rows.js";
import type { BeginFound, BeginVerdict } from "../run-rules.js";
import type { FinishValues, NewRun, RecordValues, RunsSql } from "../runs.js";
import type { Access } from "./access.js";

const MARK_UNKNOWN =
  "UPDATE job_runs SET outcome = 'unknown', note = ? WHERE id = ? AND outcome = 'running'";
/** The first row a scheduler recorded for a job, profile and due time (run-rules.ts: the claim). */
const CLAIMS = `SELECT * FROM job_runs WHERE job = ? AND profile = ? AND scheduled_at = ?
  AND trigger IN ('schedule', 'catch-up') ORDER BY id LIMIT 1`;

/** The job_runs statements on SQLite (../runs.ts decides); every write one IMMEDIATE transaction. */
export class SqliteRuns implements RunsSql {
  constructor(private readonly access: Access) {}

  async begin(
    run: NewRun,
    decide: (found: BeginFound) => BeginVerdict,
  ): Promise<{ id: number } | { claimedBy: Row } | { blocking: Row }> {
    return this.access.writeTransaction((conn) => {
      const claims = conn.stmt(CLAIMS).all(run.job, run.profile, run.scheduledAt) as Row[];
      // One host by design: runs of another boot are over.
      const active = conn
        .stmt(
          `SELECT * FROM job_runs WHERE job = ? AND profile = ? AND outcome IN ('running', 'unknown')
           AND boot_id = ? ORDER BY id DESC`,
        )
        .all(run.job, run.profile, run.launcher.bootId) as Row[];
      const verdict = decide({ claims, active });
      if (!("abandon" in verdict)) return verdict;
      const mark = conn.stmt(MARK_UNKNOWN);
      for (const a of verdict.abandon) mark.run(a.note, a.id);
      const id = Number(
        conn
          .stmt(
            `INSERT INTO job_runs (job, profile, trigger, attempt, scheduled_at, started_at, outcome,
               launcher_pid, launcher_start_ticks, boot_id)
             VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
          )
          .run(...newRunRow(run, this.access.now())).lastInsertRowid,
      );
      return { id };
    });
  }

  async attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void> {
    await this.access.writeTransaction((conn) =>
      conn
        .stmt(
          "UPDATE job_runs SET worker_pid = ?, worker_start_ticks = ? WHERE id = ? AND outcome = 'running'",
        )
        .run(worker.pid, worker.startTicks, id),
    );
  }

  async finish(id: number, v: FinishValues): Promise<void> {
    await this.access.writeTransaction((conn) => {
      conn
        .stmt(
          `UPDATE job_runs SET outcome = @outcome, finished_at = @now,
             duration_ms = @now - coalesce(started_at, @now), exit_code = @exitCode,
             signal = @signal, error_code = @errorCode, holders = @holders, note = @note,
             output_tail = @outputTail
           WHERE id = @id`,
        )
        .run({ ...v, now: this.access.now(), id });
    });
  }

  async record(v: RecordValues, claim: boolean): Promise<number | null> {
    return this.access.writeTransaction((conn) => {
      if (claim && conn.stmt(CLAIMS).get(v.job, v.profile, v.scheduledAt) !== undefined)
        return null;
      return Number(
        conn
          .stmt(
            `INSERT INTO job_runs (job, profile, trigger, scheduled_at, outcome, note, error_code)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(v.job, v.profile, v.trigger, v.scheduledAt, v.outcome, v.note, v.errorCode)
          .lastInsertRowid,
      );
    });
  }

  async markOrphans(orphaned: (row: Row) => boolean, note: (row: Row) => string): Promise<Row[]> {
    return this.access.writeTransaction((conn) => {
      const rows = conn.stmt("SELECT * FROM job_runs WHERE outcome = 'running'").all() as Row[];
      const orphans = rows.filter(orphaned);
      const mark = conn.stmt(MARK_UNKNOWN);
      for (const r of orphans) mark.run(note(r), r.id);
      return orphans;
    });
  }

  async abandon(id: number, note: string): Promise<void> {
    await this.access.writeTransaction((conn) => conn.stmt(MARK_UNKNOWN).run(note, id));
  }

  /** One host by design: /proc proves its runs alive, nothing to hold. */
  async holdPresence(): Promise<() => Promise<void>> {
    return async () => undefined;
  }

  async lastScheduled(job: string, profile: string): Promise<number | null> {
    const row = this.access
      .read()
      .stmt(
        "SELECT max(scheduled_at) AS at FROM job_runs WHERE job = ? AND profile = ? AND trigger != 'manual'",
      )
      .get(job, profile) as { at: number | null };
    return row.at;
  }

  async list(job: string | undefined, limit: number): Promise<Row[]> {
    const conn = this.access.read();
    return (
      job === undefined
        ? conn.stmt("SELECT * FROM job_runs ORDER BY id DESC LIMIT +?").all(limit)
        : conn
            .stmt("SELECT * FROM job_runs WHERE job = ? ORDER BY id DESC LIMIT +?")
            .all(job, limit)
    ) as Row[];
  }

  async get(id: number): Promise<Row | undefined> {
    return this.access.read().stmt("SELECT * FROM job_runs WHERE id = ?").get(id) as
      | Row
      | undefined;
  }

  async health(): Promise<Record<string, unknown>[]> {
    return this.access.read().stmt(JOB_HEALTH_SQL).all() as Record<string, unknown>[];
  }
}

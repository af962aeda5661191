import { JOB_HEALTH_SQL, newRunRow, type Row } from "../run-rows.js";
import type { BeginFound, BeginVerdict } from "../run-rules.js";
import type { FinishValues, NewRun, RecordValues, RunProcess, RunsSql } from "../runs.js";
import { int, num, refuseNul } from "./convert.js";
import type { PgClient, PgDb } from "./pool.js";
import { holdPresence, withPresence } from "./run-presence.js";

const MARK_UNKNOWN =
  "UPDATE job_runs SET outcome = 'unknown', note = $1 WHERE id = $2 AND outcome = 'running'";
/** The first row a scheduler recorded for a job, profile and due time (run-rules.ts: the claim). */
const CLAIMS = `SELECT * FROM job_runs WHERE job = $1 AND profile = $2 AND scheduled_at = $3
  AND trigger IN ('schedule', 'catch-up') ORDER BY id LIMIT 1`;

/**
 * The job's runs that may be alive, of every boot: the running ones, and
 * the unknown ones newer than its last run that ended. An older unknown
 * run was judged gone when that later run began (it would have blocked it
 * otherwise), and a process once gone never comes back: so the presence
 * probes stay as few as the runs in doubt, however many unknown runs the
 * table keeps.
 */
const ACTIVE = `SELECT * FROM job_runs WHERE job = $1 AND profile = $2 AND (outcome = 'running'
  OR (outcome = 'unknown' AND id > coalesce((SELECT max(id) FROM job_runs WHERE job = $1
    AND profile = $2 AND outcome IN ('ok', 'refused', 'failed')), 0)))
  ORDER BY id DESC`;

const RUN_BIGINTS = [
  "id",
  "scheduled_at",
  "started_at",
  "finished_at",
  "duration_ms",
  "worker_start_ticks",
  "launcher_start_ticks",
] as const;

/** A job_runs row from `pg` (BIGINTs as strings) in the shape ../runs.ts converts. */
function runRow(row: Record<string, unknown>): Row {
  const r = { ...row };
  for (const c of RUN_BIGINTS) r[c] = num(r[c]);
  return r as unknown as Row;
}

/**
 * The job_runs statements on PostgreSQL (../runs.ts decides). Several
 * hosts share the table: begin() and a claiming record() run in one
 * transaction holding a transaction-scoped advisory lock on (job, profile),
 * so two schedulers handling the same due time take turns and the second
 * sees the first's row (the claim); begin() reads the active runs of every
 * boot, each with whether the server holds its launcher's or worker's
 * presence (run-presence.ts), never guessed from a pid of another machine.
 */
export class PgRuns implements RunsSql {
  constructor(private readonly db: PgDb) {}

  async begin(
    run: NewRun,
    decide: (found: BeginFound) => BeginVerdict,
  ): Promise<{ id: number } | { claimedBy: Row } | { blocking: Row }> {
    for (const field of ["job", "profile", "trigger"] as const) refuseNul(field, run[field]);
    refuseNul("launcher.bootId", run.launcher.bootId);
    const judge = callerErrors(decide);
    return judge.rethrow(
      this.db.transaction("begin a job run", async (client) => {
        await lockJob(client, run.job, run.profile);
        const claims = await client.query(CLAIMS, [run.job, run.profile, run.scheduledAt]);
        const { rows } = await client.query(ACTIVE, [run.job, run.profile]);
        const verdict = judge.fn({
          claims: claims.rows.map(runRow),
          active: await withPresence(client, rows.map(runRow)),
        });
        if (!("abandon" in verdict)) return verdict;
        for (const a of verdict.abandon) await client.query(MARK_UNKNOWN, [a.note, a.id]);
        const inserted = await client.query(
          `INSERT INTO job_runs (job, profile, trigger, attempt, scheduled_at, started_at, outcome,
           launcher_pid, launcher_start_ticks, boot_id)
         VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9) RETURNING id`,
          newRunRow(run, Date.now()),
        );
        return { id: int(inserted.rows[0]?.id) };
      }),
    );
  }

  async attachWorker(id: number, worker: { pid: number; startTicks: number }): Promise<void> {
    await this.db.query(
      "attach a worker to a job run",
      "UPDATE job_runs SET worker_pid = $1, worker_start_ticks = $2 WHERE id = $3 AND outcome = 'running'",
      [worker.pid, worker.startTicks, id],
    );
  }

  async finish(id: number, v: FinishValues): Promise<void> {
    for (const field of ["outcome", "signal", "errorCode", "note", "outputTail"] as const)
      refuseNul(field, v[field]);
    await this.db.query(
      "finish a job run",
      `UPDATE job_runs SET outcome = $1, finished_at = $2, duration_ms = $2 - coalesce(started_at, $2),
         exit_code = $3, signal = $4, error_code = $5, holders = $6, note = $7, output_tail = $8
       WHERE id = $9`,
      [
        v.outcome,
        Date.now(),
        v.exitCode,
        v.signal,
        v.errorCode,
        v.holders,
        v.note,
        v.outputTail,
        id,
      ],
    );
  }

  async record(v: RecordValues, claim: boolean): Promise<number | null> {
    for (const field of ["job", "profile", "trigger", "outcome", "note"] as const)
      refuseNul(field, v[field]);
    return this.db.transaction("record a job run", async (client) => {
      if (claim) {
        await lockJob(client, v.job, v.profile);
        const found = await client.query(CLAIMS, [v.job, v.profile, v.scheduledAt]);
        if (found.rows.length > 0) return null;
      }
      const { rows } = await client.query(
        `INSERT INTO job_runs (job, profile, trigger, scheduled_at, outcome, note, error_code)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [v.job, v.profile, v.trigger, v.scheduledAt, v.outcome, v.note, v.errorCode],
      );
      return int(rows[0]?.id);
    });
  }

  async markOrphans(orphaned: (row: Row) => boolean, note: (row: Row) => string): Promise<Row[]> {
    const judge = callerErrors((rows: Row[]) => rows.filter(orphaned));
    return judge.rethrow(
      this.db.transaction("mark orphaned job runs", async (client) => {
        // Locked: a launcher finishing its run meanwhile waits, then finds it decided.
        const { rows } = await client.query(
          "SELECT * FROM job_runs WHERE outcome = 'running' ORDER BY id FOR UPDATE",
        );
        const orphans = judge.fn(await withPresence(client, rows.map(runRow)));
        for (const r of orphans) {
          await client.query(MARK_UNKNOWN, [note(r), r.id]);
        }
        return orphans;
      }),
    );
  }

  async abandon(id: number, note: string): Promise<void> {
    refuseNul("note", note);
    await this.db.query("abandon a job run", MARK_UNKNOWN, [note, id]);
  }

  async holdPresence(self: RunProcess): Promise<() => Promise<void>> {
    refuseNul("bootId", self.bootId);
    return holdPresence(this.db.url, self);
  }

  async lastScheduled(job: string, profile: string): Promise<number | null> {
    const { rows } = await this.db.query(
      "read a job's last due time",
      "SELECT max(scheduled_at) AS at FROM job_runs WHERE job = $1 AND profile = $2 AND trigger != 'manual'",
      [job, profile],
    );
    return num(rows[0]?.at);
  }

  async list(job: string | undefined, limit: number): Promise<Row[]> {
    const { rows } =
      job === undefined
        ? await this.db.query("list job runs", "SELECT * FROM job_runs ORDER BY id DESC LIMIT $1", [
            limit,
          ])
        : await this.db.query(
            "list job runs",
            "SELECT * FROM job_runs WHERE job = $1 ORDER BY id DESC LIMIT $2",
            [job, limit],
          );
    return rows.map(runRow);
  }

  async get(id: number): Promise<Row | undefined> {
    const { rows } = await this.db.query("read a job run", "SELECT * FROM job_runs WHERE id = $1", [
      id,
    ]);
    return rows[0] ? runRow(rows[0]) : undefined;
  }

  async health(): Promise<Record<string, unknown>[]> {
    // The SQLite query is portable: count(*) and the BIGINTs arrive as strings, toJobHealth makes numbers.
    const { rows } = await this.db.query("read job health", JOB_HEALTH_SQL);
    return rows;
  }
}

/** Until the transaction ends: one begin() or claiming record() per (job, profile) at a time, across every host. */
async function lockJob(client: PgClient, job: string, profile: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    JSON.stringify(["hearth:job_runs.begin", job, profile]),
  ]);
}

/**
 * The caller's callback, run inside a transaction: an error it throws
 * reaches the caller as it was thrown (the transaction rolls back), not as
 * a PostgreSQL error, as on SQLite.
 */
function callerErrors<A, R>(fn: (a: A) => R) {
  let thrown: { error: unknown } | undefined;
  return {
    fn(a: A): R {
      try {
        return fn(a);
      } catch (error) {
        thrown = { error };
        throw error;
      }
    },
    async rethrow<T>(work: Promise<T>): Promise<T> {
      try {
        return await work;
      } catch (err) {
        throw thrown ? thrown.error : err;
      }
    },
  };
}

/**
 * "The process behind a job run is alive", held by the server (M4 on
 * PostgreSQL, where several hosts share one job_runs table): a launcher
 * (scheduler, `hearth cron run-now`) and the worker it starts each hold a
 * shared session-level advisory lock on their own process identity (boot
 * id, pid, start ticks), on a connection of their own, for as long as a run
 * of theirs may be alive. The server releases it when that connection ends,
 * however the process ends (exit, kill -9, host lost once the server sees
 * the connection gone). Another host asks the lock, never /proc: a pid on
 * another machine, or in another container of this one, proves nothing.
 */
import pg from "pg";
import { HearthError } from "../../errors.js";
import type { Row } from "../run-rows.js";
import type { RunProcess } from "../runs.js";
import { applicationName, fromPgError, type PgClient } from "./pool.js";

/** The lock key of a process, computed by the server (one hash for every host). */
const KEY = "hashtextextended('hearth:job-process:' || $1, 0)";

const processKey = (p: RunProcess) => `${p.bootId}/${p.pid}/${p.startTicks}`;

/**
 * Hold `self`'s presence on a connection of its own until the returned
 * function ends it (or the process ends). `check`, run on that connection
 * once the lock is held, may refuse by throwing: the connection then ends.
 */
export async function holdPresence(
  url: string,
  self: RunProcess,
  check?: (client: pg.Client) => Promise<void>,
): Promise<() => Promise<void>> {
  const client = new pg.Client({
    connectionString: url,
    application_name: applicationName(),
    connectionTimeoutMillis: 10_000,
  });
  // A lost connection is a lost presence: others may then judge the run dead.
  client.on("error", () => undefined);
  const end = () => client.end().catch(() => undefined);
  try {
    await client.connect();
    await client.query(`SELECT pg_advisory_lock_shared(${KEY})`, [processKey(self)]);
    await check?.(client);
  } catch (err) {
    await end();
    throw fromPgError(err, url, "hold a job run's presence");
  }
  return end;
}

/**
 * A worker's presence for run `runId`: held before it does anything, then
 * the run must still be `running`. Another host that found neither the
 * launcher nor the worker present (a launcher killed between "go" and this
 * lock) has recorded it abandoned meanwhile, and this worker then does
 * nothing (HEARTH_WORKER_ABANDONED), so a run recorded over never runs on.
 */
export function holdWorkerPresence(
  url: string,
  self: RunProcess,
  runId: number,
): Promise<() => Promise<void>> {
  return holdPresence(url, self, async (client) => {
    const { rows } = await client.query("SELECT outcome FROM job_runs WHERE id = $1", [runId]);
    const outcome = rows[0]?.outcome;
    if (outcome !== "running")
      throw new HearthError(
        "HEARTH_WORKER_ABANDONED",
        `run ${runId} is ${outcome === undefined ? "not recorded" : `recorded ${outcome}`}, no longer running: its launcher was judged gone before this worker took the run; nothing was done`,
        { hint: "nothing to do: the next due time runs as usual" },
      );
  });
}

/**
 * Inside a transaction on `client`: annotate each row with whether some
 * connection (on any host) holds the presence of its launcher or its
 * worker. A probe that finds a process absent takes its lock exclusively
 * for the rest of the transaction, so that process cannot begin holding it
 * (and go on as if its run were alive) until the verdict is committed.
 */
export async function withPresence(client: PgClient, rows: Row[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const row of rows) {
    let present = false;
    for (const p of processesOf(row)) {
      const { rows: r } = await client.query(`SELECT pg_try_advisory_xact_lock(${KEY}) AS free`, [
        processKey(p),
      ]);
      if (r[0]?.free !== true) present = true;
    }
    out.push({ ...row, present });
  }
  return out;
}

/** The launcher and the worker recorded in a run row, those recorded whole. */
function processesOf(row: Row): RunProcess[] {
  if (row.boot_id === null) return [];
  const out: RunProcess[] = [];
  if (row.launcher_pid !== null && row.launcher_start_ticks !== null)
    out.push({ pid: row.launcher_pid, startTicks: row.launcher_start_ticks, bootId: row.boot_id });
  if (row.worker_pid !== null && row.worker_start_ticks !== null)
    out.push({ pid: row.worker_pid, startTicks: row.worker_start_ticks, bootId: row.boot_id });
  return out;
}

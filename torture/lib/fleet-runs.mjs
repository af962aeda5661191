// The record of `hearth start`'s scheduler runs at the end of a torture run:
// every run a profile kept is counted by job and outcome, and every scheduler
// worker the run killed -9 mid-job must be accounted for (issue 41: "every
// fault ends in a finished turn or an honest refusal"):
// - recorded `failed` or `unknown` in the live store (the launcher saw the
//   signal, or the next scheduler found the run orphaned): counted;
// - recorded `ok`: a false success (it did not finish), unless its exit
//   status is "exited 0" (no signal): the kill came after the worker had
//   finished on its own, and is counted apart;
// - otherwise (missing, or still `running` after the fleet stopped) it must
//   be in a ghost copy (`state.db.ghost-*`: a WAL removed under the
//   processes took it, and its loss was reported loudly); if not, it is a
//   killed worker not recorded, a must-be-0 row. (Until issue 41's fix a
//   repair that salvaged rows dropped every job run: 23 of 23 in a 30-minute
//   run.)
import { readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runNode } from "./proc.mjs";
import { CLI } from "./spawn.mjs";

const ACCOUNTED = new Set(["failed", "unknown"]);

/** The run of `pid`: by its recorded worker, or (killed before it was identified) by the launcher's note. */
function runOf(runs, pid) {
  return (
    runs.find((r) => r.worker?.pid === pid) ??
    runs.find((r) => r.outcome === "failed" && r.note?.includes(`(pid ${pid})`))
  );
}

/** Job runs of the ghost copies of a profile's database, with the copy they are in. */
function ghostRuns(home, profile) {
  const dir = join(home, "profiles", profile);
  const out = [];
  let names = [];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith("state.db.ghost-"));
  } catch {
    return out;
  }
  for (const name of names) {
    let db;
    try {
      db = new Database(join(dir, name), { readonly: true, fileMustExist: true });
      for (const r of db.prepare("SELECT * FROM job_runs").all())
        out.push({
          job: r.job,
          outcome: r.outcome,
          note: r.note,
          worker: r.worker_pid ? { pid: r.worker_pid } : null,
          copy: name,
        });
    } catch {
      // not a readable database (a copy of what could not be saved): nothing to count
    } finally {
      db?.close();
    }
  }
  return out;
}

export async function verifyKilledWorkers({ home, profiles, killedWorkers, stats }) {
  const live = [];
  const count = (key) => {
    stats.fleet.runs[key] = (stats.fleet.runs[key] ?? 0) + 1;
  };
  for (const profile of profiles) {
    const r = await runNode([
      CLI,
      "--home",
      home,
      "--profile",
      profile,
      "--json",
      "cron",
      "runs",
      "--limit",
      "100000",
    ]);
    let runs;
    try {
      runs = JSON.parse(r.stdout).runs ?? [];
    } catch {
      stats.unexpectedExits.push(`cron runs exited ${r.code}: ${r.stderr.slice(0, 400)}`);
      continue;
    }
    for (const run of runs) {
      count(`${run.job} ${run.outcome}`);
      live.push({ ...run, profile });
    }
  }
  let ghosts;
  for (const pid of killedWorkers) {
    const run = runOf(live, pid);
    if (run?.outcome === "ok" && run.exitCode === 0 && run.signal === null) {
      // Its exit status is "exited 0", which a SIGKILL delivered before the
      // exit cannot give: the worker finished on its own between the
      // runner's zombie check and its kill (the kill landed on a process
      // already exiting). Not a run the kill interrupted.
      count("killed worker: had already exited 0");
      continue;
    }
    if (run?.outcome === "ok") {
      count("killed worker: ok");
      stats.falseSuccesses.push(
        `the scheduler recorded ok for the ${run.job} run on ${run.profile} whose worker ${pid} was killed -9 (${run.note})`,
      );
      continue;
    }
    if (run && ACCOUNTED.has(run.outcome)) {
      count(`killed worker: ${run.outcome}`);
      continue;
    }
    ghosts ??= profiles.flatMap((p) => ghostRuns(home, p).map((g) => ({ ...g, profile: p })));
    const ghost = runOf(ghosts, pid);
    if (ghost) {
      count("killed worker: in a ghost copy");
      continue;
    }
    stats.killedWorkersUnrecorded.push(
      run
        ? `the ${run.job} run on ${run.profile} whose worker ${pid} was killed -9 is still recorded ${run.outcome} after the fleet stopped`
        : `no run of worker ${pid} (killed -9 mid-job) on ${profiles.join(" or ")}, nor in a ghost copy`,
    );
  }
}

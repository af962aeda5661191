import { type ChildProcess, spawn } from "node:child_process";
import type { JobConfig } from "../../config/schema.js";
import { HearthError, isHearthError } from "../../errors.js";
import { currentIdentity, describeProcess, liveness } from "../../process/identity.js";
import type { Store } from "../../store/api.js";
import type { JobRun, RunHolder, RunOutcome, RunProcess, RunTrigger } from "../../store/runs.js";

/** How much of a worker's output is kept with its run. */
const TAIL_CHARS = 4000;
/** After SIGKILL, how long a worker may take to be reaped before its run is left unknown. */
const REAP_GRACE_MS = 5000;

/** How the worker process is started: `node dist/cli/main.js` in practice. */
export interface WorkerCommand {
  command: string;
  /** Arguments before `worker run …` (e.g. the CLI script). */
  args: string[];
}

export interface LaunchOptions {
  home: string;
  profile: string;
  job: JobConfig;
  trigger: RunTrigger;
  scheduledAt: number;
  worker: WorkerCommand;
  /** Every store access of the launcher goes through here (the scheduler serialises them per profile). */
  withStore: <T>(fn: (store: Store) => Promise<T>) => Promise<T>;
  onEvent?: (event: string, fields: Record<string, unknown>) => void;
  /** When aborted, no further attempt (retry) starts. */
  stopping?: AbortSignal;
}

export interface LaunchReport {
  job: string;
  profile: string;
  /** The run's id; undefined when no run was started (skipped). */
  id?: number;
  outcome: RunOutcome;
  exitCode: number | null;
  signal: string | null;
  errorCode: string | null;
  holders: RunHolder[];
  attempts: number;
  note: string | null;
  /** The earlier run that may still be alive, when this one was skipped. */
  blocking?: JobRun;
  /** The run or record that already holds this due time (a scheduler on another host): nothing was run or recorded. */
  claimedBy?: JobRun;
}

/** A recorded process "may be alive" unless /proc proves it dead (P1); "unknown" counts as alive. */
export function mayBeAlive(p: { pid: number; startTicks: number; bootId: string }): boolean {
  return liveness(p) !== "dead";
}

/**
 * Run one job once (plus its retries) in a worker process, recording it:
 * `running` before the worker may start (a run of the same job that may
 * still be alive makes this one `skipped` instead), the worker's identity
 * before it is let go (it waits for "go" on stdin, so a worker whose
 * launcher died first never does anything), then the outcome its exit
 * proves: 0 ok, 3 refused (with the holders it named), anything else or a
 * signal failed. A retry goes through the same check as a new run. A due
 * time a scheduler (on another host) already recorded is not run, nor
 * recorded again (`claimedBy`). The launcher holds its presence meanwhile.
 */
export async function launchJob(o: LaunchOptions): Promise<LaunchReport> {
  const self = currentIdentity();
  if (!self) {
    throw new HearthError(
      "HEARTH_INTERNAL",
      "this process's identity (pid, start ticks, boot id) cannot be read from /proc, so runs cannot be guarded",
      { hint: "hearth's scheduler needs Linux /proc" },
    );
  }
  // Held while any attempt may run: other hosts judge these runs by it (PostgreSQL).
  const release = await o.withStore((s) => s.runs.holdPresence(self));
  try {
    return await attemptAll(o, self);
  } finally {
    await release();
  }
}

async function attemptAll(o: LaunchOptions, self: RunProcess): Promise<LaunchReport> {
  let report: LaunchReport | undefined;
  const attempts = 1 + o.job.retries;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const trigger: RunTrigger = attempt > 1 ? "retry" : o.trigger;
    const begin = await o.withStore((s) =>
      s.runs.begin(
        {
          job: o.job.name,
          profile: o.profile,
          trigger,
          attempt,
          scheduledAt: o.scheduledAt,
          launcher: self,
        },
        mayBeAlive,
      ),
    );
    if ("claimedBy" in begin) {
      const note = claimedNote(begin.claimedBy);
      o.onEvent?.("run.claimed", { job: o.job.name, profile: o.profile, note });
      return notRun(o, { outcome: "skipped", attempts: attempt, note, claimedBy: begin.claimedBy });
    }
    if (!begin.started) {
      const who = begin.blocking.worker ?? begin.blocking.launcher;
      const note = `run ${begin.blocking.id} (${begin.blocking.outcome}, pid ${who?.pid ?? "?"}) may still be alive`;
      await o.withStore((s) =>
        s.runs.record({
          job: o.job.name,
          profile: o.profile,
          trigger,
          scheduledAt: o.scheduledAt,
          outcome: "skipped",
          note,
        }),
      );
      o.onEvent?.("run.skipped", { job: o.job.name, profile: o.profile, note });
      return notRun(o, {
        outcome: "skipped",
        errorCode: "HEARTH_JOB_RUNNING",
        attempts: attempt,
        note,
        blocking: begin.blocking,
      });
    }
    report = { ...(await runWorker(o, begin.id)), attempts: attempt };
    if (report.outcome !== "failed" || attempt === attempts || o.stopping?.aborted) break;
    await new Promise((r) => setTimeout(r, o.job.retryDelayMs));
    if (o.stopping?.aborted) break;
  }
  return report!;
}

/** Why a scheduler did not run a due time another one (on another host) recorded first. */
function claimedNote(r: JobRun): string {
  const who = r.launcher
    ? `launcher pid ${r.launcher.pid} on boot ${r.bootId ?? "?"}`
    : "no launcher";
  return `this due time is claimed by run ${r.id} (${r.outcome}, ${who}); not run here`;
}

/** The report of a due time this launcher did not run. */
function notRun(
  o: LaunchOptions,
  r: Pick<LaunchReport, "outcome" | "attempts" | "note" | "blocking" | "claimedBy"> & {
    errorCode?: string;
  },
): LaunchReport {
  return {
    job: o.job.name,
    profile: o.profile,
    exitCode: null,
    signal: null,
    holders: [],
    ...r,
    errorCode: r.errorCode ?? null,
  };
}

async function runWorker(o: LaunchOptions, id: number): Promise<Omit<LaunchReport, "attempts">> {
  const args = [
    ...o.worker.args,
    "--home",
    o.home,
    "--profile",
    o.profile,
    "--json",
    "worker",
    "run",
  ];
  args.push(o.job.kind);
  if (o.job.olderThanDays !== undefined) args.push("--older-than", String(o.job.olderThanDays));
  if (o.job.kind === "command" && o.job.command) args.push("--command", o.job.command);
  if (o.job.kind === "optimize" && o.job.window) args.push("--window");
  const child = spawn(o.worker.command, args, {
    // Its own process group: a timeout kills the command it runs too, and a
    // Ctrl-C meant for a supervisor does not interrupt the work.
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      HEARTH_PROCESS_KIND: "worker",
      HEARTH_WORKER_GATE: "stdin",
      HEARTH_JOB: o.job.name,
      // The worker holds the run's presence by it (PostgreSQL, several hosts).
      HEARTH_RUN_ID: String(id),
    },
  });
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_CHARS * 2);
  };
  let stdout = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout = (stdout + c.toString("utf8")).slice(-64 * 1024);
    keep(c);
  });
  child.stderr?.on("data", keep);
  child.stdin?.on("error", () => undefined);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const base = { job: o.job.name, profile: o.profile, id };
  const pid = child.pid;
  const startTicks = pid === undefined ? undefined : describeProcess(pid).startTicks;
  if (pid === undefined || startTicks === undefined) {
    // Never let go: it exits on the closed stdin without doing anything.
    child.stdin?.end();
    const exit = await exited;
    const note = `the worker could not be started or identified${pid === undefined ? "" : ` (pid ${pid})`}`;
    await settle(o, (s) =>
      s.runs.finish(id, {
        outcome: "failed",
        exitCode: exit.code,
        signal: exit.signal,
        note,
        outputTail: tailOf(tail),
      }),
    );
    return {
      ...base,
      outcome: "failed",
      exitCode: exit.code,
      signal: exit.signal,
      errorCode: null,
      holders: [],
      note,
    };
  }
  try {
    await settle(o, (s) => s.runs.attachWorker(id, { pid, startTicks }));
  } catch (err) {
    child.stdin?.end();
    await exited;
    throw err;
  }
  child.stdin?.end("go\n");
  o.onEvent?.("run.started", { ...base, pid, kind: o.job.kind });

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child, "SIGTERM");
    setTimeout(() => killGroup(child, "SIGKILL"), 2000).unref();
  }, o.job.timeoutMs);
  const exit = await Promise.race([
    exited,
    new Promise<"unreaped">((resolve) => {
      // Only after a timeout: a worker that ignores SIGKILL (stuck in the kernel) is left unknown.
      const check = setInterval(() => {
        if (timedOut) {
          clearInterval(check);
          setTimeout(() => resolve("unreaped"), 2000 + REAP_GRACE_MS).unref();
        }
      }, 100);
      void exited.then(() => clearInterval(check));
    }),
  ]);
  clearTimeout(timer);
  if (exit === "unreaped") {
    const note = `timed out after ${o.job.timeoutMs} ms and was not reaped after SIGKILL; worker pid ${pid} may still be alive`;
    await settle(o, (s) => s.runs.abandon(id, note));
    return {
      ...base,
      outcome: "unknown",
      exitCode: null,
      signal: null,
      errorCode: null,
      holders: [],
      note,
    };
  }
  const result = resultLine(stdout);
  const error = result?.error;
  const outcome: RunOutcome =
    exit.signal === null && exit.code === 0
      ? "ok"
      : exit.signal === null && exit.code === 3
        ? "refused"
        : "failed";
  const holders = (error?.details?.holders ?? []).map((h) => ({
    pid: h.pid,
    kind: h.kind,
    commandLine: h.commandLine ?? null,
    since: h.since ?? null,
  }));
  const note = timedOut
    ? `timed out after ${o.job.timeoutMs} ms`
    : exit.signal
      ? `the worker was killed by ${exit.signal}`
      : (error?.message ?? result?.summary ?? null);
  await settle(o, (s) =>
    s.runs.finish(id, {
      outcome,
      exitCode: exit.code,
      signal: exit.signal,
      errorCode: error?.code ?? null,
      holders,
      note,
      outputTail: tailOf(tail),
    }),
  );
  o.onEvent?.("run.finished", { ...base, pid, outcome, exitCode: exit.code, signal: exit.signal });
  return {
    ...base,
    outcome,
    exitCode: exit.code,
    signal: exit.signal,
    errorCode: error?.code ?? null,
    holders,
    note,
  };
}

/** How long a run's idempotent write (attach, finish, abandon) keeps trying across a generation change. */
const SETTLE_MS = 15_000;

/**
 * A write to a run already begun, safe to try again: attach and abandon
 * only change a row still `running`, finish writes the same values. A store
 * replaced or whose -wal was removed meanwhile (a repair's or a window's
 * promote, F3) fails it with HEARTH_GENERATION_CHANGED; withStore
 * reattaches, at once or once this process's other connections to the old
 * files have closed (`waitingFor: old-connections`), and a later try lands
 * on the current files. Without it the run stayed `running` for as long as
 * its launcher lived, a killed worker's run included (issue 41).
 */
async function settle(o: LaunchOptions, fn: (store: Store) => Promise<void>): Promise<void> {
  const t0 = Date.now();
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await o.withStore(fn);
    } catch (err) {
      if (!isHearthError(err, "HEARTH_GENERATION_CHANGED") || Date.now() - t0 > SETTLE_MS)
        throw err;
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function tailOf(text: string): string | null {
  const t = text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
  return t.trim() === "" ? null : t;
}

interface ResultLine {
  event: "worker.result";
  summary?: string;
  error?: {
    code?: string;
    message?: string;
    details?: { holders?: { pid: number; kind: string; commandLine?: string; since?: string }[] };
  };
}

/** The worker's last `worker.result` line (details only: the outcome comes from the exit). */
function resultLine(stdout: string): ResultLine | undefined {
  const lines = stdout.split("\n").filter((l) => l.startsWith('{"event":"worker.result"'));
  const last = lines[lines.length - 1];
  if (!last) return undefined;
  try {
    return JSON.parse(last) as ResultLine;
  } catch {
    return undefined;
  }
}

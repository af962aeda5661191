import type { JobRun } from "../../src/store/runs.js";
import { CLI } from "./cli.js";
import { withStore, writeConfig } from "./gateway.js";
import { type Child, spawnNode } from "./process.js";

export interface SchedulerEvent {
  event?: string;
  pid?: number;
  address?: string;
  profiles?: string[];
  abandoned?: number[];
}

/** `hearth scheduler run` as a real child; `ready` resolves on its scheduler.ready line. */
export class SchedulerChild {
  readonly process: Child;
  readonly pid: number;
  address = "";
  readonly ready: Promise<SchedulerEvent>;

  constructor(home: string, args: string[] = [], env?: NodeJS.ProcessEnv) {
    this.process = spawnNode(
      [CLI, "--home", home, "scheduler", "run", ...args],
      env ? { env } : {},
    );
    this.pid = this.process.pid;
    this.ready = this.process
      .json<SchedulerEvent>((e) => e.event === "scheduler.ready", "scheduler.ready")
      .then((e) => {
        this.address = e.address ?? "";
        return e;
      });
    this.ready.catch(() => undefined);
  }

  /** Log lines (JSON on stderr) with this event. */
  logs(event: string): Record<string, unknown>[] {
    return this.process.stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.event === event);
  }
}

export async function startScheduler(home: string, args: string[] = []): Promise<SchedulerChild> {
  const s = new SchedulerChild(home, args);
  await s.ready;
  return s;
}

/** config.json with these jobs (ports 0, a short drain). */
export function writeJobs(
  home: string,
  jobs: Record<string, unknown>[],
  scheduler: Record<string, unknown> = {},
): void {
  writeConfig(home, { scheduler: { port: 0, drainMs: 10_000, ...scheduler, jobs } });
}

/** Every recorded run, oldest first, read through the store API. */
export async function runsOf(home: string, profile = "default"): Promise<JobRun[]> {
  return withStore(home, async (s) => (await s.runs.list({ limit: 10_000 })).reverse(), profile);
}

const UNTIL_RUNS_POLL_MS = 100;

/**
 * Wait until the recorded runs satisfy `check`; returns them. Each look
 * opens the store (a PostgreSQL connection, a server backend, on a pg
 * profile) and reads every run, so it looks every 100 ms, not `until`'s
 * 10 ms: at 10 ms the looking took most of a CPU from the schedulers and
 * workers it waits for, on a 2-CPU machine. Jobs are due once a second at
 * most, so a tenth of that is what the wait can add.
 */
export async function untilRuns(
  home: string,
  what: string,
  check: (runs: JobRun[]) => boolean,
  ms = 30_000,
): Promise<JobRun[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    let runs: JobRun[] | undefined;
    try {
      runs = await runsOf(home);
    } catch {
      // the store is not created yet
    }
    if (runs && check(runs)) return runs;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, UNTIL_RUNS_POLL_MS));
  }
}

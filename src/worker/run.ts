import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { JobKind } from "../config/schema.js";
import { HearthError } from "../errors.js";
import {
  backupStore,
  diagnose,
  holdRunPresence,
  maintenanceTarget,
  optimizeStore,
} from "../ops/backend.js";
import { optimize } from "../ops/optimize.js";
import { withWindow } from "../ops/window.js";
import { currentIdentity } from "../process/identity.js";
import { setProcessKind } from "../process/kind.js";
import { localActor } from "../store/audit.js";
import { openStore } from "../store/open.js";

const DAY = 24 * 60 * 60 * 1000;

/** Who a scheduled sweep deletes as in the audit trail: the local user, via the scheduler. */
const sweeper = () => ({ ...localActor(), via: "scheduler" });

export interface WorkerOptions {
  home?: string | undefined;
  profile?: string | undefined;
  olderThanDays?: number;
  command?: string;
  /** optimize: through a maintenance window. */
  window?: boolean;
}

export interface WorkerResult {
  kind: JobKind;
  /** One line for the run's record. */
  summary: string;
  /** The op's typed report. */
  report: unknown;
  /** For "command": its exit code (the worker exits with it). */
  exitCode?: number;
}

/**
 * When a launcher (scheduler, `hearth cron run-now`) started this worker, it
 * first records the worker's identity, then writes "go". A closed stdin
 * without "go" means the launcher died before that: do nothing.
 */
export async function waitForGo(): Promise<void> {
  if (process.env.HEARTH_WORKER_GATE !== "stdin") return;
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === "go") {
      lines.close();
      return;
    }
  }
  throw new HearthError(
    "HEARTH_WORKER_ABANDONED",
    "the worker's launcher closed its stdin before saying go: nothing was done",
    { hint: "the launcher (scheduler) records such a run as unknown; nothing to do" },
  );
}

/**
 * A worker started for a recorded run ($HEARTH_RUN_ID, set by its
 * launcher) holds its presence while it works (PostgreSQL: other hosts see
 * the run alive even when its launcher died), and does nothing when the
 * run was recorded abandoned meanwhile.
 */
async function holdRun(o: WorkerOptions): Promise<() => Promise<void>> {
  const raw = process.env.HEARTH_RUN_ID;
  if (!raw) return async () => undefined;
  const runId = Number(raw);
  const self = currentIdentity();
  if (!Number.isSafeInteger(runId) || !self)
    throw new HearthError(
      "HEARTH_INTERNAL",
      `the worker cannot prove its run alive (run id ${JSON.stringify(raw)}, identity ${self ? "read" : "unreadable from /proc"})`,
      { hint: "workers are started by hearth's scheduler or `hearth cron run-now`, on Linux" },
    );
  return holdRunPresence(o, runId, self);
}

/** One short-lived worker: open the store, do the job through ops/, close. */
export async function runWorkerJob(kind: JobKind, o: WorkerOptions): Promise<WorkerResult> {
  setProcessKind("worker");
  await waitForGo();
  const release = await holdRun(o);
  try {
    return await runKind(kind, o);
  } finally {
    await release();
  }
}

async function runKind(kind: JobKind, o: WorkerOptions): Promise<WorkerResult> {
  if (kind === "doctor" || kind === "backup") {
    if (kind === "backup") {
      const report = await backupStore(await maintenanceTarget(o));
      return { kind, summary: `backup: ${report.path} (${report.bytes} bytes)`, report };
    }
    const report = await diagnose(o);
    const bad = report.findings.filter((f) => f.severity === "warning" || f.severity === "error");
    return {
      kind,
      summary: `doctor: ${report.status}${bad.length ? ` (${bad.map((f) => f.code).join(", ")})` : ""}`,
      report,
    };
  }
  if (kind === "command") return runCommand(o);
  if (kind === "optimize") return runOptimize(o);
  const store = await openStore({ home: o.home, profile: o.profile, role: "writer" });
  try {
    switch (kind) {
      case "prune": {
        const report = await store.sessions.prune({
          olderThanMs: (o.olderThanDays ?? 90) * DAY,
          actor: sweeper(),
        });
        return { kind, summary: `prune: ${report.sessions.length} session(s) deleted`, report };
      }
      case "delete-empty": {
        const ids = await store.sessions.deleteEmpty({
          olderThanMs: (o.olderThanDays ?? 1) * DAY,
          actor: sweeper(),
        });
        return {
          kind,
          summary: `delete-empty: ${ids.length} session(s) deleted`,
          report: { sessions: ids },
        };
      }
      case "reap-idle": {
        const ids = await store.sessions.endIdle(store.config.gateway.idleMinutes * 60_000);
        return {
          kind,
          summary: `reap-idle: ${ids.length} session(s) ended`,
          report: { sessions: ids },
        };
      }
    }
  } finally {
    await store.close();
  }
}

/**
 * optimize: on SQLite through a maintenance window when the job asks for
 * one (its default), else refused while another writer lives; on
 * PostgreSQL VACUUM (ANALYZE) beside the live processes (no window needed,
 * so the job's window is moot there).
 */
async function runOptimize(o: WorkerOptions): Promise<WorkerResult> {
  const target = await maintenanceTarget(o);
  if (target.backend === "postgres" || !o.window) {
    const report = await optimizeStore(target);
    const how = target.backend === "postgres" ? "optimize (VACUUM ANALYZE)" : "optimize";
    return {
      kind: "optimize",
      summary: `${how}: ${report.sizeBefore} -> ${report.sizeAfter} bytes`,
      report,
    };
  }
  return withWindow(o, "optimize", async (window) => {
    const store = await openStore({ home: o.home, profile: o.profile, role: "writer" });
    try {
      const report = await optimize(store);
      return {
        kind: "optimize",
        summary: `optimize in a window (${window.parked.length} parked): ${report.sizeBefore} -> ${report.sizeAfter} bytes`,
        report: { ...report, window },
      };
    } finally {
      await store.close();
    }
  });
}

async function runCommand(o: WorkerOptions): Promise<WorkerResult> {
  if (!o.command) throw new TypeError("a command job needs --command");
  const child = spawn("/bin/sh", ["-c", o.command], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env,
      ...(o.home ? { HEARTH_HOME: o.home } : {}),
      ...(o.profile ? { HEARTH_PROFILE: o.profile } : {}),
      HEARTH_PROCESS_KIND: "worker",
      HEARTH_WORKER_GATE: "",
      HEARTH_RUN_ID: "",
    },
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.once("SIGTERM", forward("SIGTERM"));
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>(
    (resolve) => child.once("close", (c, s) => resolve({ code: c, signal: s })),
  );
  const exitCode = signal ? 1 : (code ?? 1);
  return {
    kind: "command",
    summary: signal ? `command killed by ${signal}` : `command exited ${code}`,
    report: { exitCode: code, signal },
    exitCode,
  };
}

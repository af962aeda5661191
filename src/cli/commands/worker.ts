import type { Command } from "commander";
import { JOB_KINDS, type JobKind } from "../../config/job-kinds.js";
import { toHearthError } from "../../sqlite-errors.js";
import { globals } from "../globals.js";
import { reportError } from "../output.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const runWorkerJob: typeof import("../../worker/run.js").runWorkerJob = async (...a) =>
  (await import("../../worker/run.js")).runWorkerJob(...a);

/**
 * `hearth worker run <kind>`: one scheduled job in a short-lived process of
 * kind "worker" (the scheduler and `hearth cron run-now` start it). Its exit
 * code is the outcome: 0 ok, 3 refused, 1 failed; it prints one JSON
 * `worker.result` line on stdout with the report or the error (holders
 * named). Commands exit with the command's code.
 */
export function registerWorker(program: Command, setExit: (code: number) => void): void {
  const worker = program
    .command("worker")
    .description("short-lived job processes (started by the scheduler)");
  worker
    .command("run")
    .description(`run one job: ${JOB_KINDS.join(", ")}`)
    .argument("<kind>", "the job kind")
    .option("--older-than <days>", "prune, delete-empty: age in days")
    .option("--command <shell>", "for kind command: what /bin/sh -c runs")
    .option(
      "--window",
      "optimize: park the long-lived processes for its length (a maintenance window)",
    )
    .action(
      async (
        kind: string,
        o: { olderThan?: string; command?: string; window?: boolean },
        command: Command,
      ) => {
        const g = globals(command);
        if (!(JOB_KINDS as readonly string[]).includes(kind))
          throw new TypeError(
            `job kind must be one of ${JOB_KINDS.join(", ")}, got ${JSON.stringify(kind)}`,
          );
        const olderThan = o.olderThan === undefined ? undefined : Number(o.olderThan);
        if (olderThan !== undefined && !(Number.isFinite(olderThan) && olderThan >= 0))
          throw new TypeError(
            `--older-than must be a number of days >= 0, got ${JSON.stringify(o.olderThan)}`,
          );
        try {
          const result = await runWorkerJob(kind as JobKind, {
            home: g.home,
            profile: g.profile,
            ...(olderThan === undefined ? {} : { olderThanDays: olderThan }),
            ...(o.command === undefined ? {} : { command: o.command }),
            window: o.window === true,
          });
          process.stdout.write(
            `${JSON.stringify({ event: "worker.result", kind, pid: process.pid, summary: result.summary, report: g.json ? result.report : undefined })}\n`,
          );
          setExit(result.exitCode ?? 0);
        } catch (err) {
          const code = reportError(err, { json: g.json });
          const error = toHearthError(err).toJSON();
          process.stdout.write(
            `${JSON.stringify({ event: "worker.result", kind, pid: process.pid, error })}\n`,
          );
          setExit(code);
        }
      },
    );
}

import type { Command } from "commander";
import { jobNotFound, jobsOf, setJobEnabled } from "../../config/job-edit.js";
import { JOB_KINDS } from "../../config/job-kinds.js";
import { resolveLocation } from "../../config/paths.js";
import type { JobConfigInput } from "../../config/schema.js";
import { HearthError, isHearthError } from "../../errors.js";
import { builtFile } from "../../files/built.js";
import type { Store } from "../../store/api.js";
import type { JobHealth, JobRun } from "../../store/runs.js";
import { globals } from "../globals.js";
import { EXIT, printJson } from "../output.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const editConfig: typeof import("../../config/edit.js").editConfig = async (...a) =>
  (await import("../../config/edit.js")).editConfig(...a);
const launchJob: typeof import("../../ops/jobs/launch.js").launchJob = async (...a) =>
  (await import("../../ops/jobs/launch.js")).launchJob(...a);
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);
const loadConfig = async (...a: Parameters<typeof import("../../config/load.js").loadConfig>) =>
  (await import("../../config/load.js")).loadConfig(...a);

const CLI = builtFile("cli/main.js");

function int(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 0)
      throw new TypeError(`${name} must be an integer >= 0, got ${JSON.stringify(value)}`);
    return n;
  };
}

async function readHealth(home: string, profile: string): Promise<JobHealth[]> {
  let store: Store;
  try {
    store = await openStore({ home, profile, role: "reader" });
  } catch (err) {
    if (
      isHearthError(err, "HEARTH_STORE_NOT_FOUND") ||
      isHearthError(err, "HEARTH_SCHEMA_OUTDATED")
    )
      return [];
    throw err;
  }
  try {
    return await store.runs.health();
  } finally {
    await store.close();
  }
}

/** `hearth cron list|add|remove|pause|resume|run-now|runs`: scheduled jobs in config.json and their recorded runs. */
export function registerCron(program: Command, setExit: (code: number) => void): void {
  const cron = program
    .command("cron")
    .description("scheduled jobs (config.json scheduler.jobs) and their runs");

  cron
    .command("list")
    .description("every job with its schedule, next due time and last outcome on the profile")
    .action(async (_o: unknown, command: Command) => {
      const g = globals(command);
      const { home, profile } = resolveLocation(g);
      const config = await loadConfig({ home });
      const { nextDue } = await import("../../ops/jobs/due.js");
      const health = await readHealth(home, profile);
      const now = Date.now();
      const jobs = config.scheduler.jobs.map((j) => {
        const next = j.enabled ? nextDue(j, now) : null;
        return {
          ...j,
          nextDue: next === null ? null : new Date(next).toISOString(),
          last: health.find((h) => h.job === j.name && h.profile === profile) ?? null,
        };
      });
      if (g.json) return printJson({ profile, jobs });
      if (jobs.length === 0) {
        process.stdout.write(
          "no scheduled jobs (hearth cron add NAME --schedule CRON --kind KIND)\n",
        );
        return;
      }
      for (const j of jobs) {
        const last = j.last
          ? `last ${j.last.lastOutcome}${j.last.consecutiveFailures ? ` (${j.last.consecutiveFailures} failing in a row)` : ""}, last success ${j.last.lastSuccessAt ?? "never"}`
          : "never ran";
        process.stdout.write(
          `${j.name.padEnd(16)} ${j.enabled ? "on    " : "paused"} ${j.schedule.padEnd(16)} ${(j.kind === "command" ? `command: ${j.command}` : j.kind).padEnd(14)} next ${j.nextDue ?? "-"}  ${last}\n`,
        );
      }
    });

  cron
    .command("add")
    .description("add a job to config.json (validated; written atomically)")
    .argument("<name>", "job name: lowercase letters, digits, - and _")
    .requiredOption(
      "--schedule <cron>",
      'cron expression, 5 fields or 6 with seconds ("0 3 * * *")',
    )
    .option(
      "--kind <kind>",
      `one of ${JOB_KINDS.join(", ")} (default: command when --command is given)`,
    )
    .option("--command <shell>", "a user command, run by /bin/sh -c")
    .option("--timezone <tz>", "IANA time zone of the schedule (default: the host's)")
    .option("--jitter-ms <ms>", "spread per profile, up to this many ms", int("--jitter-ms"))
    .option("--timeout-ms <ms>", "kill a run after this long", int("--timeout-ms"))
    .option(
      "--retries <n>",
      "extra attempts after a failure (never after a refusal)",
      int("--retries"),
    )
    .option("--older-than <days>", "prune, delete-empty: age in days", Number)
    .option(
      "--profiles <names>",
      "comma-separated profiles (default: every profile the scheduler serves)",
    )
    .option("--paused", "add it paused")
    .action(
      async (
        name: string,
        o: {
          schedule: string;
          kind?: string;
          command?: string;
          timezone?: string;
          jitterMs?: number;
          timeoutMs?: number;
          retries?: number;
          olderThan?: number;
          profiles?: string;
          paused?: boolean;
        },
        command: Command,
      ) => {
        const g = globals(command);
        const { home } = resolveLocation(g);
        const job: Record<string, unknown> = {
          name,
          schedule: o.schedule,
          kind: o.kind ?? (o.command ? "command" : undefined),
          ...(o.command ? { command: o.command } : {}),
          ...(o.timezone ? { timezone: o.timezone } : {}),
          ...(o.jitterMs !== undefined ? { jitterMs: o.jitterMs } : {}),
          ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
          ...(o.retries !== undefined ? { retries: o.retries } : {}),
          ...(o.olderThan !== undefined ? { olderThanDays: o.olderThan } : {}),
          ...(o.profiles ? { profiles: o.profiles.split(",").map((p) => p.trim()) } : {}),
          ...(o.paused ? { enabled: false } : {}),
        };
        if (job.kind === undefined) throw new TypeError("give --kind or --command");
        const config = await editConfig(home, (raw) => {
          const jobs = jobsOf(raw);
          if (jobs.some((j) => j.name === name))
            throw new HearthError(
              "HEARTH_JOB_EXISTS",
              `a scheduled job is already named ${JSON.stringify(name)}`,
              {
                resource: name,
                hint: `hearth cron remove ${name}, then add it again`,
              },
            );
          jobs.push(job as JobConfigInput);
        });
        const added = config.scheduler.jobs.find((j) => j.name === name)!;
        if (g.json) return printJson({ added });
        process.stdout.write(
          `added ${name}: ${added.schedule} ${added.kind}${added.enabled ? "" : " (paused)"}\n`,
        );
      },
    );

  for (const [verb, enabled] of [
    ["pause", false],
    ["resume", true],
  ] as const) {
    cron
      .command(verb)
      .description(`${verb} a job (a running scheduler picks it up within a second)`)
      .argument("<name>")
      .action(async (name: string, _o: unknown, command: Command) => {
        const g = globals(command);
        const { home } = resolveLocation(g);
        const job = await setJobEnabled(home, name, enabled);
        if (g.json) return printJson({ job });
        process.stdout.write(`${name} ${enabled ? "resumed" : "paused"}\n`);
      });
  }

  cron
    .command("remove")
    .description("remove a job from config.json (its recorded runs stay)")
    .argument("<name>")
    .action(async (name: string, _o: unknown, command: Command) => {
      const g = globals(command);
      const { home } = resolveLocation(g);
      await editConfig(home, (raw) => {
        const jobs = jobsOf(raw);
        const i = jobs.findIndex((j) => j.name === name);
        if (i < 0) throw jobNotFound(name);
        jobs.splice(i, 1);
      });
      if (g.json) return printJson({ removed: name });
      process.stdout.write(`removed ${name}\n`);
    });

  cron
    .command("run-now")
    .description(
      "run a job once now on the profile, recorded like a scheduled run (exit 0 ok, 3 refused or already running, 1 failed)",
    )
    .argument("<name>")
    .action(async (name: string, _o: unknown, command: Command) => {
      const g = globals(command);
      const { home, profile } = resolveLocation(g);
      const job = (await loadConfig({ home })).scheduler.jobs.find((j) => j.name === name);
      if (!job) throw jobNotFound(name);
      const report = await launchJob({
        home,
        profile,
        job,
        trigger: "manual",
        scheduledAt: Date.now(),
        worker: { command: process.execPath, args: [CLI] },
        withStore: async (fn) => {
          const store = await openStore({ home, profile, role: "writer" });
          try {
            return await fn(store);
          } finally {
            await store.close();
          }
        },
      });
      setExit(
        report.outcome === "ok"
          ? EXIT.ok
          : report.outcome === "refused" || report.outcome === "skipped"
            ? EXIT.refused
            : EXIT.error,
      );
      if (g.json) return printJson(report);
      process.stdout.write(
        `${name}: ${report.outcome}${report.exitCode !== null ? ` (exit ${report.exitCode})` : ""}${report.note ? `: ${report.note}` : ""}\n`,
      );
      for (const h of report.holders)
        process.stdout.write(`  held by pid ${h.pid} ${h.kind} ${h.commandLine ?? ""}\n`);
    });

  cron
    .command("runs")
    .description("recorded runs on the profile, newest first")
    .argument("[name]", "only this job")
    .option("--limit <n>", "how many", int("--limit"), 20)
    .action(async (name: string | undefined, o: { limit: number }, command: Command) => {
      const g = globals(command);
      const { home, profile } = resolveLocation(g);
      let runs: JobRun[] = [];
      try {
        const store = await openStore({ home, profile, role: "reader" });
        try {
          runs = await store.runs.list({
            ...(name ? { job: name } : {}),
            limit: Math.max(1, o.limit),
          });
        } finally {
          await store.close();
        }
      } catch (err) {
        if (!isHearthError(err, "HEARTH_STORE_NOT_FOUND")) throw err;
      }
      if (g.json) return printJson({ profile, runs });
      if (runs.length === 0) process.stdout.write("no recorded runs\n");
      for (const r of runs) {
        const held = r.holders.length
          ? `  held by ${r.holders.map((h) => `pid ${h.pid} (${h.kind})`).join(", ")}`
          : "";
        process.stdout.write(
          `${String(r.id).padStart(5)}  ${r.scheduledAt}  ${r.job.padEnd(14)} ${r.trigger.padEnd(8)} ${r.outcome.padEnd(8)} ${r.exitCode ?? "-"}  ${r.durationMs ?? "-"} ms${held}${r.note ? `  ${r.note}` : ""}\n`,
        );
      }
    });
}

import type { Command } from "commander";
import { resolveLocation } from "../../config/paths.js";
import { startScheduler } from "../../scheduler/daemon.js";
import { globals } from "../globals.js";
import { reportStartupError } from "../output.js";

/**
 * `hearth scheduler run`: the long-running scheduler. Prints one JSON
 * readiness line on stdout (logs go to stderr as JSON), drains on
 * SIGTERM/SIGINT (waits for running workers up to scheduler.drainMs, records
 * the rest unknown) and exits 0. A refusal a restart cannot fix (another
 * scheduler, invalid config, a newer schema, ...) exits 78.
 */
export function registerScheduler(program: Command, setExit: (code: number) => void): void {
  const scheduler = program.command("scheduler").description("the long-running job scheduler");
  scheduler
    .command("run")
    .description(
      "run the jobs of config.json's scheduler.jobs on their cron schedules, each in a worker process",
    )
    .option("--profiles <names>", "comma-separated profiles (default: --profile, then default)")
    .option("--log-level <level>", "fatal, error, warn, info, debug, trace")
    .action(async (o: { profiles?: string; logLevel?: string }, command: Command) => {
      const g = globals(command);
      let sched: Awaited<ReturnType<typeof startScheduler>>;
      try {
        const profiles = o.profiles
          ? o.profiles
              .split(",")
              .map((p) => p.trim())
              .filter(Boolean)
          : [resolveLocation(g).profile];
        sched = await startScheduler({
          home: g.home,
          profiles,
          ...(o.logLevel ? { logLevel: o.logLevel } : {}),
        });
      } catch (err) {
        setExit(reportStartupError(err, { json: g.json }));
        return;
      }
      const signal = await new Promise<string>((resolve) => {
        process.once("SIGTERM", () => resolve("SIGTERM"));
        process.once("SIGINT", () => resolve("SIGINT"));
        process.stdout.write(
          `${JSON.stringify({ event: "scheduler.ready", pid: process.pid, profiles: sched.profiles, address: sched.address, jobs: sched.jobs })}\n`,
        );
      });
      const { abandoned } = await sched.stop();
      // Workers left running (recorded unknown) keep pipes open: exit once the line is out.
      await new Promise<void>((resolve) =>
        process.stdout.write(
          `${JSON.stringify({ event: "scheduler.stopped", pid: process.pid, signal, abandoned })}\n`,
          () => resolve(),
        ),
      );
      if (abandoned.length > 0) process.exit(0);
    });
}

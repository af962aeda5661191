import type { Command } from "commander";
import { daemonAction } from "../daemon.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const startScheduler: typeof import("../../scheduler/daemon.js").startScheduler = async (...a) =>
  (await import("../../scheduler/daemon.js")).startScheduler(...a);

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
    .action(
      daemonAction(
        {
          name: "scheduler",
          start: startScheduler,
          ready: (s) => ({ profiles: s.profiles, address: s.address, jobs: s.jobs }),
          stopped: ({ abandoned }) => ({ abandoned }),
          exitAfterStop: ({ abandoned }) => abandoned.length > 0,
        },
        (code) => setExit(code),
      ),
    );
}

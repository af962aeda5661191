import { join } from "node:path";
import type { Command } from "commander";
import { resolveHome, validateProfile } from "../../config/paths.js";
import { builtFile } from "../../files/built.js";
import { globals } from "../globals.js";
import { reportStartupError } from "../output.js";

const CLI = builtFile("cli/main.js");

/**
 * `hearth start`: the whole product on one home (created on first run): the
 * gateway and the scheduler as supervised child processes. Their JSON
 * readiness lines pass through to stdout, then a short summary; a crashed
 * child is restarted with backoff; a child that exits 78 is not, and
 * `hearth start` stops the others and exits 78 naming it; SIGTERM/SIGINT
 * stop everything (each child drains) and exit 0.
 */
export function registerStart(program: Command, setExit: (code: number) => void): void {
  program
    .command("start")
    .description(
      "run the gateway and the scheduler on one home, supervised (exit 78: a refusal a restart cannot fix)",
    )
    .option("--profiles <names>", "comma-separated profiles (default: --profile, then default)")
    .action(async (o: { profiles?: string }, command: Command) => {
      const g = globals(command);
      const home = resolveHome(g.home);
      const [{ ensurePrivateDir }, { claimInstance }, { productChildren }, { supervise }, logs] =
        await Promise.all([
          import("../../files/create.js"),
          import("../../process/instance-lock.js"),
          import("../../supervisor/children.js"),
          import("../../supervisor/supervise.js"),
          import("./start-logs.js"),
        ]);
      const profiles = o.profiles
        ? o.profiles
            .split(",")
            .map((p) => p.trim())
            .filter(Boolean)
        : g.profile
          ? [g.profile]
          : [];
      let lock: ReturnType<typeof claimInstance>;
      let restartBackoffMs: number;
      try {
        // What no child could get past is refused here, once, before any is
        // spawned: a bad profile name or config.json (exit 78).
        for (const profile of profiles) validateProfile(profile);
        const { loadConfig } = await import("../../config/load.js");
        restartBackoffMs = loadConfig({ home }).start.restartBackoffMs;
        ensurePrivateDir(home);
        lock = claimInstance(join(home, "run", "start.lock"), {
          code: "HEARTH_START_RUNNING",
          what: `another hearth start already supervises ${home}`,
          hint: "use the running one, or stop it first (kill -TERM <pid>)",
        });
      } catch (err) {
        setExit(reportStartupError(err, { json: g.json }));
        return;
      }
      const { ring, log, childLog, childLine } = logs.supervisorLogs();
      const specs = productChildren(profiles);
      const sup = supervise({
        home,
        command: process.execPath,
        args: [CLI],
        specs,
        onLine: (line, name) => {
          process.stdout.write(`${line}\n`);
          childLine(line, name);
        },
        onLogLine: childLog,
        onReady: (ready) => {
          process.stdout.write(
            `${JSON.stringify({ event: "start.ready", pid: process.pid, home, children: Object.fromEntries([...ready].map(([n, e]) => [n, e.pid])) })}\n`,
          );
          const lines = specs.map((s) => `  ${s.describe(ready.get(s.name) ?? {})}`);
          process.stdout.write(
            `hearth is running on ${home}\n${lines.join("\n")}\nCtrl-C stops everything.\n`,
          );
        },
        log,
        restartBackoffMs,
      });
      let signal: string | undefined;
      const onSignal = (s: string) => () => {
        signal ??= s;
        sup.stop();
      };
      const control = await logs.listenForControl({
        home,
        supervisor: sup,
        ring,
        log,
        stop: onSignal("control"),
      });
      process.once("SIGTERM", onSignal("SIGTERM"));
      process.once("SIGINT", onSignal("SIGINT"));
      const result = await sup.done;
      control?.close();
      lock.release();
      if (result.error) {
        setExit(reportStartupError(result.error, { json: g.json }));
        if (result.code !== 78) setExit(result.code);
      } else setExit(0);
      process.stdout.write(
        `${JSON.stringify({ event: "start.stopped", pid: process.pid, signal: signal ?? null, code: result.code })}\n`,
      );
    });
}

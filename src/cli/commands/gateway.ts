import type { Command } from "commander";
import { resolveLocation } from "../../config/paths.js";
import { startGateway } from "../../gateway/daemon.js";
import { globals } from "../globals.js";
import { reportStartupError } from "../output.js";

/**
 * `hearth gateway run`: the long-running daemon. It holds each served
 * profile's store as a writer and its single-instance lock (P3), serves the
 * HTTP API, prints one JSON readiness line on stdout (logs go to stderr as
 * JSON), reloads its configuration on SIGHUP and drains on SIGTERM/SIGINT.
 */
export function registerGateway(
  program: Command,
  setExit: (code: number) => void = () => {},
): void {
  const gateway = program.command("gateway").description("the long-running gateway daemon");
  gateway
    .command("run")
    .description(
      "serve the HTTP API for one or more profiles (a second gateway for a profile exits 78 naming the first)",
    )
    .option(
      "--profiles <names>",
      "comma-separated profiles to serve (default: --profile, then default)",
    )
    .option("--log-level <level>", "pino level: fatal, error, warn, info, debug, trace")
    .action(async (o: { profiles?: string; logLevel?: string }, command: Command) => {
      const g = globals(command);
      const profiles = o.profiles
        ? o.profiles
            .split(",")
            .map((p) => p.trim())
            .filter(Boolean)
        : [resolveLocation(g).profile];
      let gw: Awaited<ReturnType<typeof startGateway>>;
      try {
        gw = await startGateway({
          home: g.home,
          profiles,
          ...(o.logLevel ? { logLevel: o.logLevel } : {}),
        });
      } catch (err) {
        // A refusal a restart cannot fix (a second gateway, a newer schema, ...) exits 78.
        setExit(reportStartupError(err, { json: g.json }));
        return;
      }
      process.on("SIGHUP", () => gw.reload());
      const signal = await new Promise<string>((resolve) => {
        process.once("SIGTERM", () => resolve("SIGTERM"));
        process.once("SIGINT", () => resolve("SIGINT"));
        process.stdout.write(
          `${JSON.stringify({ event: "gateway.ready", pid: process.pid, profiles: gw.profiles, profile: gw.profiles[0], path: gw.paths[0], address: gw.address })}\n`,
        );
      });
      await gw.stop();
      process.stdout.write(
        `${JSON.stringify({ event: "gateway.stopped", pid: process.pid, signal })}\n`,
      );
    });
}

import type { Command } from "commander";
import { daemonAction } from "../daemon.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const startGateway: typeof import("../../gateway/daemon.js").startGateway = async (...a) =>
  (await import("../../gateway/daemon.js")).startGateway(...a);

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
    .action(
      daemonAction(
        {
          name: "gateway",
          start: startGateway,
          ready: (gw) => ({
            profiles: gw.profiles,
            profile: gw.profiles[0],
            path: gw.paths[0],
            address: gw.address,
          }),
          onReady: (gw) => process.on("SIGHUP", () => gw.reload()),
        },
        setExit,
      ),
    );
}

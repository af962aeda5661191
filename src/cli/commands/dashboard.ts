import { hostname } from "node:os";
import type { Command } from "commander";
import { resolveLocation } from "../../config/paths.js";
import { daemonAction } from "../daemon.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { printable } from "../printable.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const startDashboard: typeof import("../../dashboard/daemon.js").startDashboard = async (...a) =>
  (await import("../../dashboard/daemon.js")).startDashboard(...a);
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);

/**
 * `hearth dashboard run`: the web app for people. It reads each served
 * profile's store through read-only connections, prints one JSON readiness
 * line on stdout with its address and a one-time login link (logs go to
 * stderr as JSON; the link, a secret, never goes to a log), and drains on
 * SIGTERM/SIGINT.
 * `hearth dashboard link`: a fresh one-time login link.
 */
export function registerDashboard(program: Command, setExit: (code: number) => void): void {
  const dashboard = program.command("dashboard").description("the web dashboard for people");
  dashboard
    .command("run")
    .description("serve the dashboard (127.0.0.1:8788 by default) and print a one-time login link")
    .option(
      "--profiles <names>",
      "comma-separated profiles to show (default: --profile, then default)",
    )
    .option("--log-level <level>", "pino level: fatal, error, warn, info, debug, trace")
    .action(
      daemonAction(
        {
          name: "dashboard",
          start: startDashboard,
          // The link only on stdout, the terminal that asked: never on stderr, which a service manager keeps as the log.
          ready: (dash) => ({ profiles: dash.profiles, address: dash.address, login: dash.login }),
        },
        setExit,
      ),
    );
  dashboard
    .command("link")
    .description("print a fresh one-time login link for the running dashboard")
    .action(async (_o: unknown, command: Command) => {
      const g = globals(command);
      const { home, profile } = resolveLocation(g);
      const [{ loadConfig }, { createLoginToken, loginLink }, { readRuntimeFile }] =
        await Promise.all([
          import("../../config/load.js"),
          import("../../dashboard/login-link.js"),
          import("../../dashboard/runtime-file.js"),
        ]);
      const config = loadConfig({ home });
      const running = readRuntimeFile(home);
      const chosen =
        running && !g.profile && !process.env.HEARTH_PROFILE ? running.profiles[0]! : profile;
      const address =
        running?.address ??
        `${config.dashboard.tls ? "https" : "http"}://${config.dashboard.host}:${config.dashboard.port}`;
      // On PostgreSQL the link works on every host's dashboard (shared logins): list them.
      let dashboards: { host: string; address: string; pid: number }[] = [];
      const token = await createLoginToken(
        {
          withWriter: async (p, fn) => {
            const store = await openStore({ home, profile: p });
            try {
              const made = await fn(store);
              dashboards = (await store.hosts.live()).filter((h) => h.kind === "dashboard");
              return made;
            } finally {
              await store.close();
            }
          },
        },
        chosen,
        config,
      );
      const link = loginLink(address, token.code);
      const here = hostname();
      const others = dashboards
        .filter((d) => !(d.host === here && d.pid === running?.pid))
        .map((d) => ({ host: d.host, address: d.address, link: loginLink(d.address, token.code) }));
      if (g.json)
        printJson({
          link,
          otherHosts: others,
          profile: chosen,
          expiresAt: new Date(token.expiresAt).toISOString(),
          running: running !== undefined,
        });
      else {
        process.stdout.write(`${link}\n`);
        for (const o of others)
          process.stdout.write(
            `or on ${printable(o.host, { oneLine: true })}: ${printable(o.link, { oneLine: true })}\n`,
          );
        if (!running)
          process.stderr.write(
            "note: no running dashboard found; start one with hearth dashboard run\n",
          );
      }
    });
}

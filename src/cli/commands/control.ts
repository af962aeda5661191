import { Argument, type Command } from "commander";
import { resolveHome } from "../../config/paths.js";
import type { LogEvent } from "../../log/ring.js";
import { globals } from "../globals.js";
import { EXIT, printJson, reportError } from "../output.js";
import { renderStatus, type StatusAnswer } from "./status-render.js";

const client = () => import("../../process/control-client.js");

/**
 * The commands that talk to the running `hearth start` over its control
 * socket (run/start.sock), never starting a second supervisor: status,
 * restart, stop, logs. Exit 6 (HEARTH_SUPERVISOR_NOT_RUNNING) when none runs.
 */
export function registerControl(program: Command, setExit: (code: number) => void): void {
  const run =
    <A extends unknown[]>(fn: (home: string, json: boolean, ...a: A) => Promise<number>) =>
    async (...a: [...A, Command]) => {
      const command = a[a.length - 1] as Command;
      const g = globals(command);
      try {
        setExit(await fn(resolveHome(g.home), g.json, ...(a.slice(0, -1) as A)));
      } catch (err) {
        setExit(reportError(err, { json: g.json }));
      }
    };

  program
    .command("status")
    .description(
      "each child of the running hearth start: pid, uptime, restarts, memory, address, readiness (exit 0 all ready, 5 not, 6 no hearth start)",
    )
    .action(
      run(async (home, json) => {
        const answer = (await (
          await client()
        ).askOnce(home, { op: "status" })) as unknown as StatusAnswer;
        const { ok: _ok, ...report } = answer;
        const ready = answer.children.every(
          (c) => c.state === "running" && c.ready?.status === "ready",
        );
        if (json) printJson({ ...report, ready });
        else process.stdout.write(renderStatus(answer));
        return ready ? EXIT.ok : EXIT.notReady;
      }),
    );

  program
    .command("restart")
    .description(
      "restart one child of the running hearth start (or all, one after the other); waits until it serves again",
    )
    .addArgument(
      new Argument("[name]", "which child").choices(["gateway", "dashboard", "scheduler"]),
    )
    .action(
      run(async (home, json, name: string | undefined) => {
        const answer = await (await client()).askOnce(
          home,
          name ? { op: "restart", name } : { op: "restart" },
        );
        const restarted = answer.restarted as { name: string; pid: number | null }[];
        if (json) printJson({ restarted });
        else
          for (const r of restarted) process.stdout.write(`${r.name} restarted (pid ${r.pid})\n`);
        return EXIT.ok;
      }),
    );

  program
    .command("stop")
    .description(
      "stop the running hearth start and its children (each drains); waits until they stopped",
    )
    .action(
      run(async (home, json) => {
        let pid: unknown;
        let code: number | undefined;
        const c = await client();
        await c.askSupervisor(home, { op: "stop" }, (m) => {
          if (m.ok === false) throw c.fromWire(m.error);
          if (m.stopping) {
            pid = m.pid;
            if (!json) process.stdout.write(`stopping hearth start (pid ${String(pid)})...\n`);
          }
          if (m.stopped) code = m.code as number;
        });
        // The connection may close with the supervisor before its last line: stopped all the same.
        if (json) printJson({ stopped: true, pid, code: code ?? null });
        else process.stdout.write("stopped\n");
        return code === undefined || code === 0 ? EXIT.ok : EXIT.error;
      }),
    );

  program
    .command("logs")
    .description(
      "recent events of the running hearth start and its children (a bounded ring); -f follows",
    )
    .option("-f, --follow", "keep printing new events until interrupted")
    .option("--level <level>", "only events at or above: trace, debug, info, warn, error, fatal")
    .option("-n, --lines <count>", "how many recent events (default 100)")
    .action(
      run(async (home, json, o: { follow?: boolean; level?: string; lines?: string }) => {
        const [{ parseLevel }, { prettyLine }, c] = await Promise.all([
          import("../../log/levels.js"),
          import("../../log/pretty.js"),
          client(),
        ]);
        const level = o.level === undefined ? 0 : parseLevel(o.level);
        const lines = o.lines === undefined ? undefined : Number(o.lines);
        if (lines !== undefined && !(Number.isInteger(lines) && lines >= 0))
          throw new RangeError(`--lines must be a whole number, got ${JSON.stringify(o.lines)}`);
        const pretty = !json && process.stdout.isTTY === true;
        const stop = new AbortController();
        process.once("SIGINT", () => stop.abort());
        process.once("SIGTERM", () => stop.abort());
        process.stdout.on("error", () => stop.abort());
        await c.askSupervisor(
          home,
          {
            op: "logs",
            level,
            follow: o.follow === true,
            ...(lines === undefined ? {} : { lines }),
          },
          (m) => {
            if (m.ok === false) throw c.fromWire(m.error);
            if (m.following)
              return void process.stderr.write("following new events (Ctrl-C stops)\n");
            const event = m.event as LogEvent;
            process.stdout.write(
              pretty ? `${prettyLine(event, { color: true })}\n` : `${JSON.stringify(event)}\n`,
            );
          },
          stop.signal,
        );
        return EXIT.ok;
      }),
    );
}

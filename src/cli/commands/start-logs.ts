import { rmSync } from "node:fs";
import { EventRing, parseLogLine } from "../../log/ring.js";
import { logSink } from "../../log/sink.js";
import { controlHandler } from "../../supervisor/control.js";
import { controlSocketPath, serveControl } from "../../supervisor/control-socket.js";
import type { Supervisor } from "../../supervisor/supervise.js";

/** Events `hearth start` keeps for `hearth logs`: its own and its children's. */
export const SUPERVISOR_EVENTS_KEPT = 2_000;

/** pino's levels: a crashed child is a warning; a refused one (exit 78) or a crash loop an error; the rest info. */
function levelOf(event: unknown): number {
  if (event === "child.refused" || event === "child.crash_loop") return 50;
  if (event === "child.crashed" || event === "control.unavailable") return 40;
  return 30;
}

/**
 * The supervisor's log: its own events and its children's stderr lines
 * (their JSON logs, parsed; a text line is their error report, kept at
 * error level) go to a bounded ring that `hearth logs` reads,
 * and to its stderr, as JSON, or pretty on a terminal. The children's
 * stdout lines (ready, stopped) are kept in the ring too.
 */
export function supervisorLogs() {
  const ring = new EventRing(SUPERVISOR_EVENTS_KEPT);
  const own = logSink({ ring, proc: "start" });
  const sinks = new Map<string, ReturnType<typeof logSink>>();
  const log = (fields: Record<string, unknown> & { event: string }) =>
    own.write(
      JSON.stringify({
        level: levelOf(fields.event),
        time: Date.now(),
        proc: "start",
        pid: process.pid,
        ...fields,
      }),
    );
  const childLog = (line: string, name: string) => {
    let sink = sinks.get(name);
    if (!sink) {
      sink = logSink({ ring, proc: name, plainLevel: 50 });
      sinks.set(name, sink);
    }
    sink.write(line);
  };
  const childLine = (line: string, name: string) => {
    if (line.startsWith("{")) ring.push(parseLogLine(line, { proc: name }));
  };
  return { ring, log, childLog, childLine };
}

/**
 * The control socket (run/start.sock) for hearth status, restart, stop and
 * logs. Supervision goes on without it when it cannot listen (logged at warn).
 */
export async function listenForControl(o: {
  home: string;
  supervisor: Supervisor;
  ring: EventRing;
  log: (fields: Record<string, unknown> & { event: string }) => void;
  stop: () => void;
}): Promise<{ close(): void } | undefined> {
  const path = controlSocketPath(o.home);
  try {
    const server = await serveControl(
      path,
      controlHandler({
        home: o.home,
        supervisor: o.supervisor,
        ring: o.ring,
        stop: o.stop,
        done: o.supervisor.done,
      }),
    );
    o.log({ event: "control.listening", socket: path });
    return {
      close: () => {
        server.close();
        rmSync(path, { force: true });
      },
    };
  } catch (err) {
    o.log({ event: "control.unavailable", err: String(err) });
    return undefined;
  }
}

import { askSupervisor } from "../process/control-client.js";
import { checkControlSocket, controlSocketPath } from "../process/control-socket.js";

/** How long the dashboard waits for `hearth start` to answer on its control socket. */
const ASK_MS = 2000;
/** How many of the supervisor's recent warn/error events are read to find each child's last error. */
const EVENTS_READ = 200;
/** pino's warn level: the least the Services page shows of the supervisor's events. */
const WARN = 40;

/** One supervised child as the Services page shows it (from `hearth status`'s answer). */
export interface SupervisedChild {
  name: string;
  state: string;
  pid: number | null;
  startedAt: string | null;
  uptimeMs: number | null;
  restarts: number;
  crashes: number;
  rssBytes: number | null;
  address: string | null;
  /** Its /v1/ready as the supervisor probed it ("ready", "not ready", "unreachable"), null when not running. */
  ready: string | null;
  lastExit: { code: number | null; signal: string | null; at: string } | null;
  /** Its newest warn/error event in the supervisor's ring (its stderr, or the supervisor's own about it). */
  lastError: { time: number; level: number; msg: string } | null;
}

export type SupervisorView =
  | { supervised: false; reason: string }
  | {
      supervised: true;
      pid: number;
      startedAt: string | null;
      children: SupervisedChild[];
      /** The supervisor's own recent warn/error events (crashes, restarts), newest last. */
      events: { time: number; level: number; msg: string; child: string | null }[];
    };

function text(e: Record<string, unknown>): string {
  const parts = [e.event, e.msg, e.err].filter((x) => typeof x === "string" && x !== "");
  if (e.event === "child.crashed")
    parts.push(`exit ${String(e.code ?? e.signal)}, restart in ${String(e.restartInMs)} ms`);
  return parts.join(": ").slice(0, 300);
}

/** Ask the supervisor of `home`; null when it closed without answering or timed out. */
async function ask(
  home: string,
  request: { op: "status" } | { op: "logs"; level: number; lines: number },
): Promise<Record<string, unknown>[] | null> {
  const lines: Record<string, unknown>[] = [];
  await askSupervisor(home, request, (m) => lines.push(m), AbortSignal.timeout(ASK_MS));
  return lines.length > 0 ? lines : null;
}

/**
 * What `hearth start` (the supervisor of this home, run/start.sock) says
 * of its children: pid, uptime, restarts, RSS, readiness, last exit, and
 * the newest warn/error event each left in its ring; `supervised: false`
 * with the reason when no supervisor runs for this home (or its socket is
 * not one this user may trust: refused, never read).
 */
export async function supervisorView(home: string): Promise<SupervisorView> {
  const path = controlSocketPath(home);
  try {
    if (!checkControlSocket(path)) return { supervised: false, reason: "no hearth start runs" };
    const status = (await ask(home, { op: "status" }))?.[0];
    if (!status || status.ok !== true || !Array.isArray(status.children))
      return { supervised: false, reason: "hearth start did not answer" };
    const logged = (await ask(home, { op: "logs", level: WARN, lines: EVENTS_READ })) ?? [];
    const events = logged
      .map((m) => m.event as Record<string, unknown> | undefined)
      .filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null);
    const lastError = new Map<string, SupervisedChild["lastError"]>();
    const own: Extract<SupervisorView, { supervised: true }>["events"] = [];
    for (const e of events) {
      const entry = { time: Number(e.time), level: Number(e.level), msg: text(e) };
      // The supervisor's own events name the child they are about.
      const about = e.proc === "start" ? e.name : e.proc;
      const child = typeof about === "string" ? about : null;
      if (e.proc === "start") own.push({ ...entry, child });
      if (child !== null) lastError.set(child, entry);
    }
    return {
      supervised: true,
      pid: Number(status.pid),
      startedAt: typeof status.startedAt === "string" ? status.startedAt : null,
      children: (status.children as Record<string, unknown>[]).map((c) => ({
        name: String(c.name),
        state: String(c.state),
        pid: typeof c.pid === "number" ? c.pid : null,
        startedAt: typeof c.startedAt === "string" ? c.startedAt : null,
        uptimeMs: typeof c.uptimeMs === "number" ? c.uptimeMs : null,
        restarts: Number(c.restarts ?? 0),
        crashes: Number(c.crashes ?? 0),
        rssBytes: typeof c.rssBytes === "number" ? c.rssBytes : null,
        address: typeof c.address === "string" ? c.address : null,
        ready:
          c.ready && typeof (c.ready as { status?: unknown }).status === "string"
            ? (c.ready as { status: string }).status
            : null,
        lastExit: (c.lastExit as SupervisedChild["lastExit"]) ?? null,
        lastError: lastError.get(String(c.name)) ?? null,
      })),
      events: own.slice(-20),
    };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "HEARTH_SUPERVISOR_NOT_RUNNING")
      return { supervised: false, reason: "no hearth start runs" };
    if (code === "HEARTH_CONTROL_SOCKET_UNSAFE")
      return { supervised: false, reason: "its control socket is not one this user may trust" };
    return { supervised: false, reason: "hearth start did not answer" };
  }
}

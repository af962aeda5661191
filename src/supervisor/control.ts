import { HearthError } from "../errors.js";
import { probeReady, rssBytes } from "../http/ready-probe.js";
import type { EventRing } from "../log/ring.js";
import { toHearthError } from "../sqlite-errors.js";
import type { ControlConnection, ControlRequest } from "./control-socket.js";
import type { Supervisor, SupervisorResult } from "./supervise.js";

/** Events `hearth logs` gets when it names no count. */
export const DEFAULT_LOG_LINES = 100;

/**
 * What `hearth start` answers on its control socket (docs/cli.md):
 * status (each child with pid, uptime, restarts, RSS from /proc and its
 * /v1/ready), restart (one child or all, one after the other, each
 * answered once it serves again), stop (answered at once, then again
 * when everything stopped), logs (the recent events, then, with follow,
 * every new one until the client goes).
 */
export function controlHandler(o: {
  home: string;
  supervisor: Supervisor;
  ring: EventRing;
  stop(): void;
  done: Promise<SupervisorResult>;
}): (request: ControlRequest, conn: ControlConnection) => void {
  const started = new Date().toISOString();
  const fail = (conn: ControlConnection, err: unknown) => {
    conn.send({ ok: false, error: toHearthError(err).toJSON() });
    conn.end();
  };
  return (request, conn) => {
    switch (request.op) {
      case "status":
        void Promise.all(
          o.supervisor.status().map(async (c) => ({
            ...c,
            rssBytes: c.pid === null ? null : rssBytes(c.pid),
            ready: c.pid !== null && c.address !== null ? await probeReady(c.address) : null,
          })),
        ).then(
          (children) => {
            conn.send({ ok: true, pid: process.pid, home: o.home, startedAt: started, children });
            conn.end();
          },
          (err: unknown) => fail(conn, err),
        );
        return;
      case "restart":
        void (async () => {
          const names = request.name ? [request.name] : o.supervisor.status().map((c) => c.name);
          const restarted = [];
          for (const name of names) {
            const ready = await o.supervisor.restart(name);
            restarted.push({ name, pid: ready.pid ?? null });
          }
          conn.send({ ok: true, restarted });
          conn.end();
        })().catch((err: unknown) => fail(conn, err));
        return;
      case "stop":
        conn.send({ ok: true, stopping: true, pid: process.pid });
        o.stop();
        void o.done.then((r) => {
          conn.send({ ok: true, stopped: true, code: r.code });
          conn.end();
        });
        return;
      case "logs": {
        const level = typeof request.level === "number" ? request.level : 0;
        const lines =
          typeof request.lines === "number" && request.lines >= 0
            ? request.lines
            : DEFAULT_LOG_LINES;
        for (const event of o.ring.recent(level, lines)) conn.send({ event });
        if (!request.follow) return conn.end();
        conn.send({ ok: true, following: true });
        const unfollow = o.ring.follow((event) => {
          if (event.level >= level) conn.send({ event });
        });
        conn.onClose(unfollow);
        return;
      }
      default:
        fail(
          conn,
          new HearthError(
            "HEARTH_USAGE",
            `unknown control request ${JSON.stringify((request as { op: unknown }).op)}`,
          ),
        );
    }
  };
}

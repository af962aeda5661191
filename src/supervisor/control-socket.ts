import { chmodSync, type Stats, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { HearthError } from "../errors.js";
import { lstatOrNull } from "../files/inspect.js";

/** Where `hearth start` listens for `hearth status|restart|stop|logs`. */
export function controlSocketPath(home: string): string {
  return join(home, "run", "start.sock");
}

/** One request line on the control socket (docs/cli.md). */
export type ControlRequest =
  | { op: "status" }
  | { op: "restart"; name?: string }
  | { op: "stop" }
  | { op: "logs"; level?: number; lines?: number; follow?: boolean };

export interface ControlConnection {
  /** One JSON line to the client. */
  send(message: unknown): void;
  /** Close the connection (after the lines sent so far). */
  end(): void;
  /** Called once when the client goes away. */
  onClose(fn: () => void): void;
}

/**
 * Refuse a control socket path this user must not trust: the run folder
 * must be a real directory owned by us and closed to others, the socket a
 * socket owned by us with mode 0600 (a socket planted by another user
 * could answer `hearth status` with lies or swallow `hearth stop`).
 * Returns false when there is no socket at all.
 */
export function checkControlSocket(path: string): boolean {
  const uid = process.getuid?.() ?? 0;
  let dir: Stats | null;
  let sock: Stats | null;
  try {
    dir = lstatOrNull(join(path, ".."));
    sock = lstatOrNull(path);
  } catch (err) {
    // A home that is a file, not a folder: nothing can listen there.
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") return false;
    throw err;
  }
  if (!sock) return false;
  const bad = (why: string) =>
    new HearthError("HEARTH_CONTROL_SOCKET_UNSAFE", `refusing the control socket ${path}: ${why}`, {
      resource: path,
      hint: "stop whatever made it, remove it, and run hearth start again",
    });
  if (!dir?.isDirectory() || dir.uid !== uid || (dir.mode & 0o077) !== 0)
    throw bad("its folder is not a directory of this user closed to others");
  if (!sock.isSocket()) throw bad("it is not a socket");
  if (sock.uid !== uid) throw bad(`it is owned by uid ${sock.uid}, not this user (${uid})`);
  if ((sock.mode & 0o077) !== 0) throw bad("others may connect to it (mode not 0600)");
  return true;
}

/**
 * Listen on the control socket (the caller holds run/start.lock, so a
 * socket left there is a dead supervisor's and is removed; anything that
 * is not our socket is refused, never removed). Mode 0600 from the first
 * instant (umask while binding), in the 0700 run folder: only this user
 * (and root) may connect. Each connection sends one JSON request line.
 */
export async function serveControl(
  path: string,
  handle: (request: ControlRequest, conn: ControlConnection) => void,
): Promise<Server> {
  if (lstatOrNull(path)) {
    checkControlSocket(path);
    unlinkSync(path);
  }
  const server = createServer((socket) => serveConnection(socket, handle));
  const old = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(old);
  }
  chmodSync(path, 0o600);
  server.unref();
  return server;
}

function serveConnection(
  socket: Socket,
  handle: (request: ControlRequest, conn: ControlConnection) => void,
): void {
  socket.on("error", () => undefined);
  const closers: (() => void)[] = [];
  socket.once("close", () => {
    for (const fn of closers.splice(0)) fn();
  });
  const conn: ControlConnection = {
    send: (message) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    },
    end: () => socket.end(),
    onClose: (fn) => closers.push(fn),
  };
  const lines = createInterface({ input: socket });
  lines.once("line", (line) => {
    lines.close();
    let request: ControlRequest;
    try {
      request = JSON.parse(line) as ControlRequest;
      if (typeof request?.op !== "string") throw new Error("no op");
    } catch {
      conn.send({
        ok: false,
        error: new HearthError("HEARTH_USAGE", "the control socket takes one JSON request line"),
      });
      conn.end();
      return;
    }
    handle(request, conn);
  });
}

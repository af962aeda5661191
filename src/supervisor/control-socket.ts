import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { HearthError } from "../errors.js";
import { lstatOrNull } from "../files/inspect.js";
import {
  type ControlRequest,
  checkControlSocket,
  controlSocketPath,
} from "../process/control-socket.js";
import { readLines } from "../process/lines.js";

export { type ControlRequest, checkControlSocket, controlSocketPath };

export interface ControlConnection {
  /** One JSON line to the client. */
  send(message: unknown): void;
  /** Close the connection (after the lines sent so far). */
  end(): void;
  /** Called once when the client goes away. */
  onClose(fn: () => void): void;
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
  const lines = readLines(socket);
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

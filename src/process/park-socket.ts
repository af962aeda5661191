import { rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { currentIdentity } from "./identity.js";
import { runDir } from "./markers.js";

/**
 * The request channel of maintenance windows (M5). Each long-lived hearth
 * process (gateway, dashboard) listens on a Unix socket in the profile's
 * run/ directory (0700: only this user can ask). A structural operation
 * connects and asks it to park; the process finishes in-flight calls,
 * closes its connections, answers "parked" and stays parked for as long as
 * that connection is open. The kernel closes the connection when the
 * surgeon exits, however it exits, so a crashed surgeon never leaves
 * anyone parked. A process that is stopped, dead or busy does not answer in
 * time: the window refuses and everyone else resumes.
 */

export interface ParkRequest {
  /** The structural operation, for logs ("optimize"). */
  op: string;
  /** The surgeon's pid. */
  by: number;
  /** How long the surgeon waits for the answer; the parked process waits as long for it to finish. */
  maxParkMs: number;
}

export interface ParkAnswer {
  parked: boolean;
  pid: number;
  startTicks: number | null;
  error?: string;
}

export interface ParkHandlers {
  /** Finish in-flight work and close connections; reject to refuse. */
  park(request: ParkRequest): Promise<void>;
  /** Reopen and drain what queued. Called once per successful park. */
  resume(request: ParkRequest): Promise<void>;
}

/** Where a process's park socket lives: short, so it fits the 107-byte limit of socket paths. */
export function parkSocketPath(profileDir: string, pid: number): string {
  return join(runDir(profileDir), `park-${pid}.sock`);
}

const MAX_SOCKET_PATH = 107;

export interface ParkServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Listen for park requests on `parkSocketPath(profileDir, pid)`. One window
 * at a time: a second request while parked is refused. Returns undefined
 * when the path is too long for a Unix socket (windows then refuse, naming
 * this process).
 */
export async function serveParking(
  profileDir: string,
  handlers: ParkHandlers,
): Promise<ParkServer | undefined> {
  const path = parkSocketPath(profileDir, process.pid);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return undefined;
  ensurePrivateDir(runDir(profileDir));
  rmSync(path, { force: true }); // a socket file left by a process with this pid before a reboot
  const identity = currentIdentity();
  const answer = (socket: Socket, value: Omit<ParkAnswer, "pid" | "startTicks">) =>
    socket.write(
      `${JSON.stringify({ ...value, pid: process.pid, startTicks: identity?.startTicks ?? null })}\n`,
    );
  let busy = false;
  const server: Server = createServer((socket) => {
    socket.on("error", () => undefined);
    const lines = createInterface({ input: socket });
    lines.once("line", (line) => {
      lines.close();
      let request: ParkRequest;
      try {
        request = JSON.parse(line) as ParkRequest;
        if (typeof request.op !== "string" || !Number.isInteger(request.maxParkMs))
          throw new TypeError("not a park request");
      } catch (err) {
        answer(socket, { parked: false, error: (err as Error).message });
        socket.end();
        return;
      }
      if (busy) {
        answer(socket, { parked: false, error: "already parked for another window" });
        socket.end();
        return;
      }
      busy = true;
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      void (async () => {
        try {
          await handlers.park(request);
        } catch (err) {
          busy = false;
          answer(socket, { parked: false, error: (err as Error).message });
          socket.end();
          return;
        }
        if (socket.destroyed) {
          // The surgeon gave up before we were parked: resume at once.
        } else {
          answer(socket, { parked: true });
          await closed;
        }
        try {
          await handlers.resume(request);
        } finally {
          busy = false;
        }
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(path, { force: true });
      }),
  };
}

export interface ParkHandle {
  readonly answer: ParkAnswer;
  /** End the window for this process: it resumes. */
  release(): void;
}

/**
 * Ask the process listening at `path` to park; resolves once it answered
 * "parked", rejects with HEARTH_STORE_HELD when it refused, is gone, or did
 * not answer within `request.maxParkMs`. The window lasts until release()
 * (or this process's exit).
 */
export function askToPark(path: string, request: ParkRequest): Promise<ParkHandle> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new HearthError("HEARTH_STORE_HELD", why, { resource: path }));
    };
    const timer = setTimeout(
      () => fail(`did not park within ${request.maxParkMs} ms (stopped, or busy past the bound)`),
      request.maxParkMs,
    );
    socket.on("error", (err) => fail(`cannot be asked to park: ${err.message}`));
    socket.on("close", () => fail("closed the request without parking"));
    socket.write(`${JSON.stringify(request)}\n`);
    createInterface({ input: socket }).once("line", (line) => {
      let answer: ParkAnswer;
      try {
        answer = JSON.parse(line) as ParkAnswer;
      } catch {
        return fail("answered something that is not a park answer");
      }
      if (!answer.parked) return fail(`refused to park: ${answer.error ?? "no reason given"}`);
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ answer, release: () => socket.end() });
    });
  });
}

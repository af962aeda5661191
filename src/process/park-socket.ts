import { linkSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { currentIdentity } from "./identity.js";
import { readLines } from "./lines.js";
import { runDir } from "./markers.js";

/**
 * The request channel of maintenance windows (M5). Each long-lived hearth
 * process (gateway, dashboard) listens on a Unix socket in the profile's
 * run/ directory (0700: only this user can ask); one socket per process,
 * linked into every profile's run/ directory it serves. A structural operation
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
  /** The profile directory to park (one socket serves every profile of a process). */
  dir?: string;
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

/** One served profile's handlers and its window state (one window at a time per profile). */
interface Served {
  handlers: ParkHandlers;
  busy: boolean;
}

/**
 * The process's one listening socket (a descriptor per process, not per
 * served profile: a gateway of 200 profiles held 200). It is bound at the
 * first served profile's path; every other profile's path is a hard link to
 * that socket file (a Unix socket is found by its inode), so surgeons find
 * it where they always did. A request names its profile directory (`dir`).
 */
interface Hub {
  server: Server;
  /** Where the socket was bound. */
  bound: string;
  /** The names that reach it now (bound and linked): a new link is made from any of them. */
  names: Set<string>;
  served: Map<string, Served>;
}
let hub: Hub | undefined;

/**
 * Listen for park requests on `parkSocketPath(profileDir, pid)`. One window
 * at a time per profile: a second request while parked is refused. Returns
 * undefined when the path is too long for a Unix socket (windows then
 * refuse, naming this process). Every profile of the process shares one
 * socket (a hard link per profile); where a link cannot be made (another
 * filesystem), that profile gets a socket of its own.
 */
export async function serveParking(
  profileDir: string,
  handlers: ParkHandlers,
): Promise<ParkServer | undefined> {
  const path = parkSocketPath(profileDir, process.pid);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return undefined;
  ensurePrivateDir(runDir(profileDir));
  rmSync(path, { force: true }); // a socket file left by a process with this pid before a reboot
  const served: Served = { handlers, busy: false };
  const shared = hub && linked(hub, path) ? hub : undefined;
  const own = shared ?? (await listenAt(path));
  if (!shared) hub ??= own;
  own.served.set(profileDir, served);
  own.names.add(path);
  return {
    path,
    close: async () => {
      if (own.served.get(profileDir) === served) own.served.delete(profileDir);
      own.names.delete(path);
      rmSync(path, { force: true });
      if (own.served.size > 0) return;
      if (hub === own) hub = undefined;
      await new Promise<void>((resolve) => own.server.close(() => resolve()));
      rmSync(own.bound, { force: true });
    },
  };
}

/** Link `path` to the hub's socket; false when it cannot be (another filesystem, its names gone). */
function linked(h: Hub, path: string): boolean {
  for (const name of h.names) {
    try {
      linkSync(name, path);
      return true;
    } catch {
      // another filesystem, or this name was removed: try the next
    }
  }
  return false;
}

async function listenAt(path: string): Promise<Hub> {
  const identity = currentIdentity();
  const answer = (socket: Socket, value: Omit<ParkAnswer, "pid" | "startTicks">) =>
    socket.write(
      `${JSON.stringify({ ...value, pid: process.pid, startTicks: identity?.startTicks ?? null })}\n`,
    );
  const h: Hub = {
    server: undefined as unknown as Server,
    bound: path,
    names: new Set(),
    served: new Map(),
  };
  const refuse = (socket: Socket, error: string) => {
    answer(socket, { parked: false, error });
    socket.end();
  };
  h.server = createServer((socket) => {
    socket.on("error", () => undefined);
    const lines = readLines(socket);
    lines.once("line", (line) => {
      lines.close();
      let request: ParkRequest;
      try {
        request = JSON.parse(line) as ParkRequest;
        if (typeof request.op !== "string" || !Number.isInteger(request.maxParkMs))
          throw new TypeError("not a park request");
      } catch (err) {
        return refuse(socket, (err as Error).message);
      }
      // Fail closed: a request that names no profile served here parks nothing.
      const only = h.served.size === 1 ? [...h.served.values()][0] : undefined;
      const served = request.dir === undefined ? only : h.served.get(request.dir);
      if (!served) return refuse(socket, `does not serve ${request.dir ?? "an unnamed profile"}`);
      if (served.busy) return refuse(socket, "already parked for another window");
      served.busy = true;
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      void (async () => {
        try {
          await served.handlers.park(request);
        } catch (err) {
          served.busy = false;
          return refuse(socket, (err as Error).message);
        }
        if (socket.destroyed) {
          // The surgeon gave up before we were parked: resume at once.
        } else {
          answer(socket, { parked: true });
          await closed;
        }
        try {
          await served.handlers.resume(request);
        } finally {
          served.busy = false;
        }
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    h.server.once("error", reject);
    h.server.listen(path, () => resolve());
  });
  return h;
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
    readLines(socket).once("line", (line) => {
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

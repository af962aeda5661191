import type { Stats } from "node:fs";
import { join } from "node:path";
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

import { connect } from "node:net";
import { HearthError } from "../errors.js";
import { type ControlRequest, checkControlSocket, controlSocketPath } from "./control-socket.js";
import { readLines } from "./lines.js";

function notRunning(home: string): HearthError {
  return new HearthError("HEARTH_SUPERVISOR_NOT_RUNNING", `no hearth start runs on ${home}`, {
    resource: home,
    hint: "start it: hearth start (or systemctl start hearth); hearth ps shows what holds the stores",
  });
}

function lost(home: string, err: NodeJS.ErrnoException): HearthError {
  return new HearthError(
    "HEARTH_SUPERVISOR_LOST",
    `hearth start on ${home} broke the connection (${err.code ?? err.message}): it died or was killed mid-request`,
    {
      resource: home,
      cause: err,
      hint: "hearth status says whether it runs now; a stop or restart may have been done or not",
    },
  );
}

/**
 * Send one request to the running `hearth start` of `home` and call
 * `onMessage` with each JSON line it answers, until it closes the
 * connection (or `signal` aborts). HEARTH_SUPERVISOR_NOT_RUNNING when none
 * listens, HEARTH_CONTROL_SOCKET_UNSAFE for a socket this user must not trust.
 */
export async function askSupervisor(
  home: string,
  request: ControlRequest,
  onMessage: (message: Record<string, unknown>) => void,
  signal?: AbortSignal,
): Promise<void> {
  const path = controlSocketPath(home);
  if (!checkControlSocket(path)) throw notRunning(home);
  await new Promise<void>((resolve, reject) => {
    const socket = connect(path);
    let connected = false;
    signal?.addEventListener("abort", () => socket.destroy(), { once: true });
    socket.once("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === "ECONNREFUSED" || err.code === "ENOENT"))
        reject(notRunning(home));
      else if (signal?.aborted) return;
      else if (connected) reject(lost(home, err));
      else reject(err);
    });
    readLines(socket).on("line", (line) => {
      try {
        onMessage(JSON.parse(line) as Record<string, unknown>);
      } catch (err) {
        socket.destroy();
        reject(err);
      }
    });
    socket.once("close", () => resolve());
  });
}

/** One request, its one answer: `{ ok: true, ... }`, or the HearthError it carried thrown. */
export async function askOnce(
  home: string,
  request: ControlRequest,
): Promise<Record<string, unknown>> {
  let answer: Record<string, unknown> | undefined;
  await askSupervisor(home, request, (m) => {
    answer ??= m;
  });
  if (!answer)
    throw new HearthError(
      "HEARTH_INTERNAL",
      "hearth start closed the control socket without answering",
    );
  if (answer.ok === false) throw fromWire(answer.error);
  return answer;
}

/** A HearthError sent over the socket, as an error again. */
export function fromWire(error: unknown): HearthError {
  const e = (error ?? {}) as { code?: string; message?: string; hint?: string; resource?: string };
  return new HearthError(
    (e.code ?? "HEARTH_INTERNAL") as ConstructorParameters<typeof HearthError>[0],
    e.message ?? "hearth start answered with an error",
    { ...(e.hint ? { hint: e.hint } : {}), ...(e.resource ? { resource: e.resource } : {}) },
  );
}

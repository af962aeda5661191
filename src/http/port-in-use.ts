import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { HearthError } from "../errors.js";

/**
 * A listen that fails because the port is taken is a refusal a restart
 * cannot fix (exit 78 under `hearth start`): HEARTH_PORT_IN_USE names the
 * port and, where /proc tells, the process listening on it. Any other
 * listen error is passed on as it is.
 */
export async function listenOrExplain<T>(
  listen: () => Promise<T>,
  where: { what: string; host: string; port: number; setting: string },
): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const holder = portHolder(where.port);
    throw new HearthError(
      "HEARTH_PORT_IN_USE",
      `the ${where.what} cannot listen on ${where.host}:${where.port}: the port is in use${holder ? ` by pid ${holder.pid} (${holder.command})` : " (by a process hearth cannot name: another user's, or /proc is unreadable)"}`,
      {
        resource: `${where.host}:${where.port}`,
        cause: err,
        details: { port: where.port, holder: holder ?? null },
        hint: `stop that process, or set ${where.setting} to a free port`,
      },
    );
  }
}

/** The process listening on TCP `port` (IPv4 or IPv6), from /proc/net and the descriptors of /proc; undefined when /proc cannot tell. */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the 10th field.
      const local = fields[1]?.split(":");
      if (fields[3] !== "0A" || !local || Number.parseInt(local[1] ?? "", 16) !== port) continue;
      if (fields[9]) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return { pid: Number(pid), command: commandOf(pid) };
    }
  }
  return undefined;
}

/** The process's name only: its command line may carry secrets (a URL with a password). */
function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "unknown";
  }
}

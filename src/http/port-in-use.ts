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
  return new PortTable().holderOf(port);
}

/**
 * One reading of the host's listening TCP sockets, for a command that asks
 * about several ports (doctor: the gateway's, the scheduler's and the
 * dashboard's). /proc/net/tcp costs far more than its few lines: the kernel
 * walks its whole socket hash to print them (5–10 ms a read on a 24 GiB
 * host), so it is read once per table, not once per port; the descriptors of
 * /proc are walked once, and only when some port asked about is taken.
 */
export class PortTable {
  private listening: Map<number, Set<string>> | undefined;
  private owners: Map<string, number> | undefined;

  holderOf(port: number): { pid: number; command: string } | undefined {
    const inodes = this.listeners().get(port);
    if (!inodes) return undefined;
    for (const inode of inodes) {
      const pid = this.socketOwners().get(inode);
      if (pid !== undefined) return { pid, command: commandOf(String(pid)) };
    }
    return undefined;
  }

  /** Each listening port with its sockets' inodes. */
  private listeners(): Map<number, Set<string>> {
    if (this.listening) return this.listening;
    const ports = new Map<number, Set<string>>();
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
        if (fields[3] !== "0A" || !local || !fields[9]) continue;
        const port = Number.parseInt(local[1] ?? "", 16);
        const set = ports.get(port);
        if (set) set.add(fields[9]);
        else ports.set(port, new Set([fields[9]]));
      }
    }
    this.listening = ports;
    return ports;
  }

  /** The pid holding each listening socket, from one walk of every readable descriptor table. */
  private socketOwners(): Map<string, number> {
    if (this.owners) return this.owners;
    const wanted = new Set<string>();
    for (const set of this.listeners().values()) for (const inode of set) wanted.add(inode);
    const owners = new Map<string, number>();
    let pids: string[];
    try {
      pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
    } catch {
      pids = [];
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
        if (inode && wanted.has(inode) && !owners.has(inode)) owners.set(inode, Number(pid));
      }
    }
    this.owners = owners;
    return owners;
  }
}

/** The process's name only: its command line may carry secrets (a URL with a password). */
function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "unknown";
  }
}

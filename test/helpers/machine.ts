/**
 * "Another machine" for a child process on this one: its own hostname and
 * boot id (a user, UTS and mount namespace: `hostname`, and a file bound
 * over /proc/sys/kernel/random/boot_id), the same pid, network and
 * /etc/machine-id. hearth's process identity (P1) and its host name for a
 * lease then differ from this machine's, as on a second host sharing one
 * PostgreSQL database.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempHome } from "./home.js";

export interface Machine {
  hostname: string;
  bootId: string;
  /** `unshare` arguments that run the command after them on this machine (pid kept: no fork). */
  unshare: string[];
}

const SETUP =
  'hostname "$0" && mount --bind "$1" /proc/sys/kernel/random/boot_id && shift && exec "$@"';

/** A machine with a fresh hostname and boot id; pass `hostname` to keep this one's (a clone). */
export function otherMachine(hostname = `other-${randomUUID().slice(0, 8)}`): Machine {
  const bootId = randomUUID();
  const file = join(dirname(tempHome()), "boot_id");
  writeFileSync(file, `${bootId}\n`);
  return {
    hostname,
    bootId,
    unshare: ["--user", "--map-root-user", "--uts", "--mount", "sh", "-c", SETUP, hostname, file],
  };
}

/** True where this machine lets a process make those namespaces (unprivileged or root). */
export const otherMachinesAvailable = (() => {
  const m = otherMachine();
  const r = spawnSync("unshare", [...m.unshare, "cat", "/proc/sys/kernel/random/boot_id"], {
    encoding: "utf8",
  });
  return r.status === 0 && r.stdout.trim() === m.bootId;
})();

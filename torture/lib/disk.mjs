// A disk that fills up and is freed again: the run's home lives on a small
// tmpfs of its own (mounted when the runner may mount, as root does here);
// a fill action writes a filler file next to the home until ENOSPC, keeps
// the disk full for a while under load, deletes the filler, and then a
// write must be acknowledged again within RESUME_MS (writes resume by
// themselves once space is freed). Without a mount, the fill is "not
// exercised" and the run says so.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

const RESUME_MS = 30_000;
const CHUNK = Buffer.alloc(1 << 20, 0x5a);

/** Mount a tmpfs of `mib` MiB at `dir`; returns why not when it cannot. */
export function mountTmpfs(dir, mib) {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m,mode=0700`, "tmpfs", dir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    return undefined;
  } catch (err) {
    return String(err.stderr ?? err.message).trim() || "mount failed";
  }
}

/**
 * Unmount the tmpfs of earlier runs whose runner is gone (SIGKILLed: it
 * could not unmount). Each run writes its pid to <dir>/runner.pid; only a
 * pid the kernel says is not in use (ESRCH) counts as gone.
 */
export function sweepStaleMounts(tmp) {
  let mounts = "";
  try {
    mounts = readFileSync("/proc/self/mounts", "utf8");
  } catch {
    return [];
  }
  const swept = [];
  for (const line of mounts.split("\n")) {
    const target = line.split(" ")[1] ?? "";
    const m = /^(.*\/hearth-torture-[^/]+)\/disk$/.exec(target);
    if (!m || !m[1].startsWith(tmp)) continue;
    let pid = 0;
    try {
      pid = Number(readFileSync(join(m[1], "runner.pid"), "utf8"));
      process.kill(pid, 0);
      continue; // its runner lives
    } catch (err) {
      if (pid > 0 && err.code !== "ESRCH") continue;
    }
    unmount(target);
    swept.push(target);
  }
  return swept;
}

export function unmount(dir) {
  try {
    execFileSync("umount", [dir], { stdio: ["ignore", "ignore", "pipe"] });
  } catch {
    execFileSync("umount", ["-l", dir], { stdio: "ignore" });
  }
}

/** Bytes under `dir` (regular files, by size), never following links. */
export function diskUse(dir) {
  let total = 0;
  let names = [];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of names) {
    const p = join(dir, e.name);
    try {
      if (e.isDirectory()) total += diskUse(p);
      else if (e.isFile()) total += statSync(p).size;
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

export class Disk {
  constructor({ mnt, stats, actors }) {
    this.mnt = mnt; // undefined: not mounted, fills are not exercised
    this.stats = stats;
    this.actors = actors;
  }

  /** Fill the tmpfs, hold it full for `ms` under load, free it, and wait for an acknowledged write. */
  async fill(ms) {
    if (!this.mnt) return;
    const filler = join(this.mnt, "filler");
    const fd = openSync(filler, "w", 0o600);
    let bytes = 0;
    try {
      for (;;) {
        writeSync(fd, CHUNK);
        bytes += CHUNK.length;
      }
    } catch (err) {
      if (err.code !== "ENOSPC") throw err;
    }
    // The last few blocks: fill to the byte.
    try {
      for (;;) bytes += writeSync(fd, CHUNK, 0, 4096);
    } catch {
      // full
    } finally {
      closeSync(fd);
    }
    this.stats.disk.fills++;
    this.actors.trace(`disk full (${bytes} bytes of filler)`);
    await new Promise((r) => setTimeout(r, ms));
    const acked = this.actors.ledger.count("gateway");
    const statusBefore = { ...this.stats.gatewayStatus };
    rmSync(filler, { force: true });
    this.actors.trace("disk freed");
    const t0 = Date.now();
    while (this.actors.ledger.count("gateway") === acked) {
      if (Date.now() - t0 > RESUME_MS) {
        const gw = this.actors.gateway;
        const answers = Object.fromEntries(
          Object.entries(this.stats.gatewayStatus)
            .map(([k, n]) => [k, n - (statusBefore[k] ?? 0)])
            .filter(([, n]) => n > 0),
        );
        this.stats.writesNotResumed.push(
          `no write acknowledged within ${RESUME_MS} ms of freeing the disk; answers meanwhile ${JSON.stringify(answers)}; gateway ${gw?.proc.pid} alive ${gw?.proc.alive} stopped ${gw?.proc.stopped}; its stderr: ${gw?.proc.stderr.slice(-1500)}`,
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    this.stats.disk.resumeMs.push(Date.now() - t0);
  }
}

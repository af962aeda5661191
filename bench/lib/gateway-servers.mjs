// The servers of workloads 3, 8 and 14: a real `hearth gateway run` child on
// a fresh home (config.json: the synchronous level and gateway.groupCommit),
// the gateway's fair ceiling (bench/workers/gateway-sql-ceiling.mjs: fastify
// and raw better-sqlite3 doing a turn's SQL in group commits, on a store
// hearth created), its HTTP ceiling (bench/workers/gateway-ceiling.mjs: the
// same server with a no-op store); their resident set size and CPU time from
// /proc; the group-commit histogram from their /metrics.
import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startChild, startProcess } from "./procs.mjs";
import { newStore, removeDir, tempDir } from "./stores.mjs";

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/**
 * A gateway process. spec: { synchronous: "full" | "normal", groupCommit },
 * { sqlCeiling: true, synchronous, writerThread? } or { ceiling: true }. Resolves with
 * { pid, address, stop() } once it listens (the gateway's readiness line).
 */
export async function startServer(spec) {
  if (spec.sqlCeiling) {
    const { home, path } = await newStore("sql-ceiling", spec.synchronous);
    const script = fileURLToPath(new URL("../workers/gateway-sql-ceiling.mjs", import.meta.url));
    const arg = { path, synchronous: spec.synchronous, writerThread: spec.writerThread === true };
    const child = startProcess([...(spec.nodeArgs ?? []), script, JSON.stringify(arg)], {
      label: "gateway-sql-ceiling",
    });
    const { address } = await child.line((l) => l.listening === true);
    await child.line((l) => l.ready === true);
    return {
      pid: child.pid,
      address,
      async stop() {
        await child.stop();
        removeDir(home);
      },
    };
  }
  if (spec.ceiling) {
    const child = startChild("gateway-ceiling.mjs", {});
    const { address } = await child.line((l) => l.listening === true);
    await child.line((l) => l.ready === true);
    return { pid: child.pid, address, stop: () => child.stop() };
  }
  const home = tempDir("gateway");
  const config = {
    durability: { synchronous: spec.synchronous },
    gateway: { groupCommit: spec.groupCommit },
    ...(spec.config ?? {}),
  };
  writeFileSync(join(home, "config.json"), `${JSON.stringify(config)}\n`);
  // A store built beforehand (one closed, checkpointed database file), copied in.
  if (spec.database) copyFileSync(spec.database, join(home, "state.db"));
  const env = {
    ...process.env,
    HEARTH_GATEWAY_PORT: "0",
    HEARTH_GATEWAY_HOST: "127.0.0.1",
    HEARTH_LOG_LEVEL: "info",
    ...(spec.env ?? {}),
  };
  // spec.nodeArgs: flags for node itself (workload 14 preloads bench/workers/gc-on-signal.mjs).
  const args = [...(spec.nodeArgs ?? []), spec.cli ?? CLI, "--home", home, "gateway", "run"];
  const child = startProcess(args, { label: "gateway", env });
  const ready = await child.line((l) => l.event === "gateway.ready");
  return {
    pid: ready.pid,
    address: ready.address,
    home,
    child,
    async stop() {
      const code = await child.signal("SIGTERM");
      removeDir(home);
      if (code !== 0) throw new Error(`gateway exited with ${code}\n${child.stderr()}`);
    },
  };
}

/** VmRSS of a process in MB (10^6 bytes; /proc reports kB = 1024 bytes). */
export function rssMB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return (Number(m[1]) * 1024) / 1e6;
}

/** Sample rssMB(pid) every `everyMs`; stop() → the largest sample. */
export function rssSampler(pid, everyMs = 100) {
  let max = rssMB(pid);
  const timer = setInterval(() => {
    try {
      max = Math.max(max, rssMB(pid));
    } catch {
      clearInterval(timer); // the process is gone: the workload reports why
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      max = Math.max(max, rssMB(pid));
      return max;
    },
  };
}

const TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
  } catch {
    return 100;
  }
})();

/**
 * Two fields of /proc/<pid>/stat added, as ms. Fields are counted after the
 * command (which may hold spaces): state is field 3, utime 14, stime 15,
 * cutime 16, cstime 17.
 */
function statMs(pid, first, second) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[first - 3]) + Number(fields[second - 3])) * 1000) / TICKS;
}

/** CPU time (user + system) a process has used so far, in ms (clock-tick resolution). */
export function cpuMs(pid) {
  return statMs(pid, 14, 15);
}

/**
 * CPU (user + system, ms) of this process's children that have ended and
 * been waited for (cutime + cstime): read before and after a spawnSync, the
 * difference is that child's CPU, to a clock tick (10 ms at USER_HZ 100;
 * the mean over many spawns resolves it).
 */
export function childrenCpuMs() {
  return statMs("self", 16, 17);
}

/** The group-commit batch histogram of /metrics so far: { sum (messages), count (commits) }. */
export async function commitBatches(address) {
  const text = await (await fetch(new URL("/metrics", address))).text();
  const lines = text.split("\n");
  const value = (name) => {
    const line = lines.find((l) => l.startsWith(`${name}{profile="default"} `));
    return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
  };
  // hearth_write_commits_total{profile,fsync}: the store's commits by where their fsync ran.
  const commits = { loop: 0, pool: 0 };
  for (const l of lines) {
    const m = /^hearth_write_commits_total\{profile="default",fsync="([^"]+)"\} (\S+)$/.exec(l);
    if (m) commits[m[1] === "loop" ? "loop" : "pool"] += Number(m[2]);
  }
  // hearth_wal_fsyncs_total: the WAL fsyncs of the store's write-path commits (the
  // raw SQL ceiling reports one per commit of its own at FULL: batches and new sessions).
  const fsyncLine = lines.find((l) => l.startsWith('hearth_wal_fsyncs_total{profile="default"} '));
  let acked = 0;
  for (const l of lines) {
    const m = /^hearth_messages_acknowledged_total\{profile="default",role="[^"]+"\} (\S+)$/.exec(
      l,
    );
    if (m) acked += Number(m[1]);
  }
  return {
    sum: value("hearth_commit_batch_size_sum"),
    count: value("hearth_commit_batch_size_count"),
    commits,
    fsyncs: fsyncLine ? Number(fsyncLine.slice(fsyncLine.lastIndexOf(" ") + 1)) : undefined,
    acked,
  };
}

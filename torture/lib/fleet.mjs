// `hearth start` in a torture run: the supervisor of a gateway, a scheduler
// and a dashboard for two more profiles (p1, p2) of the same home, next to
// the run's own gateway and dashboard on `default`. The scheduler runs
// maintenance jobs every few seconds (backup, optimize in a window, prune,
// delete-empty, doctor), each a `hearth worker run` process of its own.
//
// Faults: kill -9 of the supervisor (its children must go by themselves;
// it is started again), of one of its children (it must restart it: the
// child's readiness line comes again with a new pid), and of a scheduler
// worker mid-job (the run must be recorded failed or unknown, never ok).
// A client loop writes to both profiles through the supervised gateway;
// every acknowledged write goes to the ledger with its profile.
import { readdirSync, readFileSync } from "node:fs";
import { verifyKilledWorkers } from "./fleet-runs.mjs";
import { prng } from "./prng.mjs";
import { Proc } from "./proc.mjs";
import { CLI, DAEMON_PORTS, START_MS, sleep } from "./spawn.mjs";

/** A supervised child killed must serve again within this (backoff starts at 0.5 s). */
const RECOVER_MS = 30_000;

/** The scheduler's jobs of a run: every few seconds, so kills land mid-job. */
export const FLEET_JOBS = [
  { name: "t-backup", schedule: "*/5 * * * * *", kind: "backup" },
  { name: "t-optimize", schedule: "*/11 * * * * *", kind: "optimize" },
  { name: "t-prune", schedule: "*/13 * * * * *", kind: "prune" },
  { name: "t-delete-empty", schedule: "*/17 * * * * *", kind: "delete-empty" },
  { name: "t-doctor", schedule: "*/7 * * * * *", kind: "doctor" },
];

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code !== "ESRCH";
  }
};

/** Pids whose parent is `ppid` and whose command line contains `word`. */
function childrenOf(ppid, word) {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== ppid) continue;
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").includes(word))
        out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** True when `pid` is gone or a zombie: it has exited (stat's state after the command name). */
function exitedAlready(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true;
  }
}

export class Fleet {
  constructor({ actors, stats, ledger, home, seed, env }) {
    this.actors = actors;
    this.stats = stats;
    this.ledger = ledger;
    this.home = home;
    this.seed = seed;
    this.env = env; // the stray-inside preload
    this.profiles = ["p1", "p2"];
    this.proc = undefined;
    this.children = {}; // name -> pid
    this.gatewayAddress = "";
    this.ready = undefined;
    this.startedOnce = false;
    this.killedWorkers = []; // pids
    this.loop = undefined;
  }

  /** Every supervised process alive now (for the descriptor checks). */
  holders() {
    const out = [];
    for (const [name, pid] of Object.entries(this.children))
      if (alive(pid)) out.push({ name: `start/${name}`, pid });
    return out;
  }

  async start() {
    const t0 = Date.now();
    const proc = new Proc(
      [CLI, "--home", this.home, "start", "--profiles", this.profiles.join(",")],
      { env: { ...DAEMON_PORTS, ...this.env }, name: "start" },
    );
    this.proc = proc;
    this.children = {};
    this.gatewayAddress = "";
    proc.onLine = (line) => {
      if (!line.startsWith("{")) return;
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        return;
      }
      const name = /^(gateway|scheduler|dashboard)\.ready$/.exec(e.event ?? "")?.[1];
      if (!name) return;
      this.children[name] = e.pid;
      if (name === "gateway") this.gatewayAddress = e.address;
    };
    this.ready = proc.json((e) => e.event === "start.ready", START_MS, "start.ready");
    try {
      await this.ready;
    } catch (err) {
      this.stats.staleLockBlocks.push(`hearth start failed: ${err.message}`);
      throw err;
    }
    this.startedOnce = true;
    void proc.exited.then(({ code, signal }) => {
      if (proc.expected || this.actors.stopping || this.proc !== proc) return;
      // A child that exits 78 stops the supervisor (HEARTH_CHILD_REFUSED): after a
      // WAL removed under it that may be the loud refusal the product promises.
      const loud = code === 78 && /HEARTH_CHILD_REFUSED|"child\.refused"/.test(proc.stderr);
      if (loud) this.stats.fleet.refused78++;
      else
        this.stats.unexpectedExits.push(
          `hearth start exited ${signal ?? code}: ${proc.stderr.slice(-800)}`,
        );
      this.actors.trace(`hearth start ${proc.pid} exited ${signal ?? code}, starting again`);
      this.start().catch(() => undefined);
    });
    this.stats.fleet.starts++;
    return Date.now() - t0;
  }

  /** Client load on p1 and p2 through the supervised gateway. */
  startLoad() {
    this.loop = this.clientLoop();
    return this.loop;
  }

  async clientLoop() {
    const rng = prng(this.seed * 37 + 5);
    let n = 0;
    let pending;
    for (let attempts = 0; !this.actors.stopping; ) {
      if (!pending) {
        const profile = this.profiles[n % this.profiles.length];
        pending = { clientId: `f-${n++}`, chat: `f${rng.int(0, 5)}`, profile };
        attempts = 0;
      }
      try {
        await this.ready;
      } catch {
        if (this.stats.staleLockBlocks.length > 0) return;
      }
      if (!this.gatewayAddress) {
        await sleep(50);
        continue;
      }
      let status;
      try {
        const res = await fetch(`${this.gatewayAddress}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            platform: "torture",
            chat: pending.chat,
            content: `message ${pending.clientId}`,
            clientId: pending.clientId,
            profile: pending.profile,
          }),
          signal: AbortSignal.timeout(20_000),
        });
        status = String(res.status);
        const body = await res.json().catch(() => undefined);
        if (res.status === 200) {
          this.ledger.ack(pending.clientId, body.session.id, "fleet", pending.profile);
          pending = undefined;
        } else if (body?.error?.code) status = `${res.status} ${body.error.code}`;
      } catch (err) {
        status = `error ${err.cause?.code ?? err.name}`;
      }
      const key = this.actors.faults.label(`start/gateway ${status}`);
      this.stats.gatewayStatus[key] = (this.stats.gatewayStatus[key] ?? 0) + 1;
      if (pending && ++attempts > 200) pending = undefined;
      await sleep(rng.int(5, 60));
    }
  }

  /** kill -9 of `target`: supervisor, gateway, scheduler, dashboard or worker (a scheduler's job). */
  async kill(target, pick) {
    if (!this.proc?.alive) return;
    if (target === "supervisor") return this.killSupervisor();
    if (target === "worker") return this.killWorker(pick);
    return this.killChild(target);
  }

  async killSupervisor() {
    const proc = this.proc;
    const kids = Object.values(this.children);
    proc.expected = true;
    await proc.kill("SIGKILL");
    this.stats.fleet.killed.supervisor++;
    // Its children must notice and stop by themselves (HEARTH_SUPERVISOR_PID).
    const t0 = Date.now();
    while (kids.some(alive) && Date.now() - t0 < RECOVER_MS) await sleep(100);
    const left = kids.filter(alive);
    if (left.length > 0) {
      this.stats.neverRecovered.push(
        `children ${left.join(", ")} of a SIGKILLed hearth start still ran after ${RECOVER_MS} ms`,
      );
      for (const pid of left) process.kill(pid, "SIGKILL");
    } else this.stats.fleet.orphanExitMs.push(Date.now() - t0);
    try {
      await this.start();
    } catch {
      return; // recorded as a blocked start
    }
    await this.actors.checks.run("after kill -9 of hearth start");
  }

  async killChild(name) {
    const pid = this.children[name];
    if (!pid || !alive(pid)) return;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      return;
    }
    this.stats.fleet.killed[name]++;
    const t0 = Date.now();
    while (this.children[name] === pid && Date.now() - t0 < RECOVER_MS && this.proc.alive)
      await sleep(50);
    if (this.children[name] === pid && this.proc.alive)
      this.stats.neverRecovered.push(
        `hearth start did not bring its ${name} back within ${RECOVER_MS} ms of its kill -9`,
      );
    else if (this.children[name] !== pid) this.stats.fleet.childRestartMs.push(Date.now() - t0);
    await this.actors.checks.run(`after kill -9 of start's ${name}`);
  }

  /** A scheduler worker killed mid-job: its run must not be recorded ok. */
  async killWorker(pick) {
    const t0 = Date.now();
    let workers = [];
    while (Date.now() - t0 < 15_000 && !this.actors.stopping) {
      const sched = this.children.scheduler;
      workers = sched ? childrenOf(sched, "worker") : [];
      if (workers.length > 0) break;
      await sleep(20);
    }
    if (workers.length === 0) return void this.stats.fleet.workerKillsMissed++;
    const pid = workers[Math.floor(pick * workers.length)];
    // Mid-job: a few ms in, after the scheduler said "go".
    await sleep(Math.floor(pick * 200));
    // A worker that already exited (a zombie its scheduler has not reaped) is not killed mid-job.
    if (exitedAlready(pid)) return void this.stats.fleet.workerKillsMissed++;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      return void this.stats.fleet.workerKillsMissed++;
    }
    this.stats.fleet.killed.worker++;
    this.killedWorkers.push(pid);
    await this.actors.checks.run("after kill -9 of a scheduler worker");
  }

  /** At the end: each killed worker's run is recorded failed or unknown, or lost loudly (fleet-runs.mjs). */
  verifyRuns() {
    return verifyKilledWorkers({
      home: this.home,
      profiles: this.profiles,
      killedWorkers: this.killedWorkers,
      stats: this.stats,
    });
  }

  async stop() {
    const proc = this.proc;
    if (!proc?.alive) return;
    proc.expected = true;
    proc.signal("SIGTERM");
    const t = setTimeout(() => proc.signal("SIGKILL"), 20_000);
    await proc.exited;
    clearTimeout(t);
    await this.loop;
  }
}

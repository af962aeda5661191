// The processes of a torture run and the actions the schedule fires at them.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { runChat } from "./chat.mjs";
import { dashboardLoop, startDashboard } from "./dashboard-actor.mjs";
import { prng } from "./prng.mjs";
import { Proc, runNode } from "./proc.mjs";
import { CLI, DAEMON_PORTS, START_MS, STRAY, sleep } from "./spawn.mjs";
import { runWorker } from "./worker-actor.mjs";
import { acpRun, dashboardChat } from "./writers.mjs";

export class Actors {
  constructor({ home, ledger, stats, seed, clients, traceFile, daemonEnv = {} }) {
    this.daemonEnv = daemonEnv; // the stray-inside preload for the gateway and the dashboard
    this.acps = new Set();
    this.acpSeq = 0;
    this.dashChatSeq = 0;
    this.home = home;
    this.db = join(home, "state.db");
    this.ledger = ledger;
    this.stats = stats;
    this.seed = seed;
    this.clientCount = clients;
    this.gateway = undefined; // { proc, address, expected }
    this.gatewayReady = undefined; // promise of the current start
    this.dashboard = undefined;
    this.workers = new Set();
    this.workerSeq = 0;
    this.loops = [];
    this.stopping = false;
    this.restarting = undefined;
    this.traceFile = traceFile; // off the store's disk, which may be full
    this.chatSeq = 0;
    // Maintenance windows running now, and how many began so far: sidecars
    // may be new after a window (every process closed), never otherwise.
    this.windows = {
      active: 0,
      seq: 0,
      begin: () => {
        this.windows.active++;
        this.windows.seq++;
      },
      end: () => {
        this.windows.active--;
        this.windows.seq++;
      },
    };
  }

  /** Every hearth process of the run that is alive now. */
  holders() {
    const list = [];
    if (this.gateway?.proc.alive) list.push(this.gateway.proc);
    if (this.dashboard?.proc.alive) list.push(this.dashboard.proc);
    for (const w of this.workers) if (w.alive) list.push(w);
    for (const a of this.acps) if (a.alive) list.push(a);
    return list;
  }

  // --- gateway ---------------------------------------------------------

  async startGateway(env = {}) {
    const t0 = Date.now();
    const proc = new Proc([CLI, "--home", this.home, "gateway", "run"], {
      env: { ...DAEMON_PORTS, ...this.daemonEnv, ...env },
      name: "gateway",
    });
    const gw = { proc, address: "", expected: false, armed: env.HEARTH_FAILPOINTS?.split("=")[0] };
    this.trace(`gateway ${proc.pid} starting ${env.HEARTH_FAILPOINTS ?? ""}`);
    this.gateway = gw;
    this.gatewayReady = proc
      .json((e) => e.event === "gateway.ready", START_MS, "gateway.ready")
      .then((e) => {
        gw.address = e.address;
        return Date.now() - t0;
      });
    let ms;
    try {
      ms = await this.gatewayReady;
    } catch (err) {
      if (gw.armed && !proc.alive && proc.child.signalCode === "SIGKILL") {
        // An armed gateway can reach its Nth commit during its own start (recovery writes).
        this.stats.failpoints[gw.armed].fired++;
        return this.startGateway();
      }
      this.stats.staleLockBlocks.push(`gateway start failed: ${err.message}`);
      throw err;
    }
    void proc.exited.then(({ signal, code }) => {
      if (gw.expected || this.stopping || this.gateway !== gw) return;
      // Died by itself: an armed failpoint fired (SIGKILL), or a crash.
      if (gw.armed && signal === "SIGKILL") this.stats.failpoints[gw.armed].fired++;
      else
        this.stats.unexpectedExits.push(
          `gateway exited ${signal ?? code}: ${proc.stderr.slice(-800)}`,
        );
      this.trace(`gateway ${proc.pid} died by itself (${signal ?? code}), restarting`);
      this.track(
        this.restartGateway("gateway died by itself").catch(() => undefined), // recorded as a blocked start
      );
    });
    return ms;
  }

  async restartGateway(label, env = {}) {
    const ms = await this.startGateway(env);
    this.stats.restartMs.push(ms);
    await this.checks.run(label);
  }

  /** The restart in progress; a restart that starts later replaces it. */
  track(promise) {
    this.restarting = promise;
    promise
      .finally(() => {
        if (this.restarting === promise) this.restarting = undefined;
      })
      .catch(() => undefined);
    return promise;
  }

  async killGateway(env = {}) {
    for (let i = 0; this.restarting && i < 10; i++) await this.restarting.catch(() => undefined);
    const gw = this.gateway;
    gw.expected = true;
    await gw.proc.kill("SIGKILL");
    this.stats.killed.gateway++;
    await this.track(this.restartGateway("after kill -9 of the gateway", env));
  }

  // --- client load -----------------------------------------------------

  startLoad() {
    for (let c = 0; c < this.clientCount; c++) this.loops.push(this.clientLoop(c));
    this.loops.push(this.dashboardLoop());
  }

  async stopLoad() {
    this.stopping = true;
    await Promise.all(this.loops);
    this.loops = [];
    await Promise.all([...this.workers, ...this.acps].map((w) => w.exited));
  }

  async clientLoop(c) {
    const rng = prng(this.seed * 31 + c + 1);
    let n = 0;
    let pending;
    for (let attempts = 0; !this.stopping; ) {
      if (!pending) {
        pending = { clientId: `g${c}-${n++}`, chat: `c${c}-${rng.int(0, 7)}` };
        attempts = 0;
      }
      const gw = this.gateway;
      try {
        await this.gatewayReady;
      } catch {
        // A start that failed for good fails the run (a stale-lock block);
        // one that a failpoint killed is followed by another start: wait for it.
        if (this.stats.staleLockBlocks.length > 0) return;
        await sleep(50);
        continue;
      }
      let status;
      try {
        const res = await fetch(`${gw.address}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            platform: "torture",
            chat: pending.chat,
            content: `message ${pending.clientId}`,
            clientId: pending.clientId,
          }),
          signal: AbortSignal.timeout(20_000),
        });
        status = String(res.status);
        const body = await res.json().catch(() => undefined);
        if (res.status === 200) {
          this.ledger.ack(pending.clientId, body.session.id, "gateway");
          pending = undefined;
        } else if (body?.error?.code) status = `${res.status} ${body.error.code}`;
      } catch (err) {
        status = `error ${err.cause?.code ?? err.name}`;
        if (this.gateway === gw) await sleep(20);
      }
      this.stats.gatewayStatus[status] = (this.stats.gatewayStatus[status] ?? 0) + 1;
      if (pending && ++attempts > 200) pending = undefined; // never acknowledged: not counted
      await sleep(rng.int(5, 40));
    }
  }

  // --- dashboard (dashboard-actor.mjs) and short-lived writers (worker-actor.mjs) ---

  startDashboard() {
    return startDashboard(this);
  }

  dashboardLoop() {
    return dashboardLoop(this);
  }

  runWorker(count, options) {
    return runWorker(this, count, options);
  }

  // --- the scheduled actions -------------------------------------------

  trace(text) {
    appendFileSync(this.traceFile, `${new Date().toISOString()} ${text}\n`);
  }

  /** One scheduled action; the trace says when it began and how long it took. */
  async perform(event) {
    this.trace(`action ${JSON.stringify(event)}`);
    const t0 = Date.now();
    try {
      return await this.act(event);
    } finally {
      this.trace(`action ${event.action} done in ${Date.now() - t0} ms`);
    }
  }

  async act(event) {
    switch (event.action) {
      case "worker":
        // A third of the workers also do a stray open/close inside themselves (F2);
        // some run DDL under the structural gate; some die at a write failpoint.
        return void this.runWorker(event.messages, {
          strayInside: event.pick < 1 / 3,
          ddl: event.variant === "ddl",
          failpoint:
            event.variant === "failpoint" ? `${event.failpoint}=kill@${event.k}` : undefined,
        });
      case "cli":
        return this.maintenance.perform(event.command);
      case "chat":
        return runChat(this, this.chatSeq++, event.turns, event.handoff);
      case "kill":
        return this.kill(event);
      case "failpoint":
        if (event.failpoint === "backup.mid-publish") return this.scratch.backupMidPublish();
        this.stats.failpoints[event.failpoint].armed++;
        return this.killGateway({ HEARTH_FAILPOINTS: `${event.failpoint}=kill@${event.k}` });
      case "scratch":
        return this.scratch.drill(event.drill);
      case "fill":
        return this.disk.fill(event.ms);
      case "stopped-window":
        return this.maintenance.stoppedWindow();
      case "stray": {
        this.stats.strays++;
        const { code, stderr } = await runNode([STRAY, this.db, String(event.rounds)]);
        if (code !== 0) this.stats.unexpectedExits.push(`stray fd exited ${code}: ${stderr}`);
        return undefined;
      }
      case "stop":
        return this.stop(event);
      case "fleet-kill":
        return this.fleet.kill(event.target, event.pick);
      case "wal-delete":
        return this.faults.walDelete(event.profile);
      case "damage":
        return this.faults.damageAndRepair(event.profile);
      case "stray-daemon":
        return this.faults.strayInside(event.pick);
      case "acp":
        return void acpRun(this, event.profile, this.acpSeq++, event.turns, event.kill);
      case "dash-chat":
        for (let i = 0; i < event.count; i++)
          if (!(await dashboardChat(this, event.profile, this.dashChatSeq++))) break;
        return undefined;
    }
  }

  async kill(event) {
    if (event.target === "gateway") return this.killGateway();
    if (event.target === "dashboard") {
      const d = this.dashboard;
      d.expected = true;
      await d.proc.kill("SIGKILL");
      this.stats.killed.dashboard++;
      try {
        await this.startDashboard();
      } catch {
        return undefined; // recorded as a blocked start
      }
      return this.checks.run("after kill -9 of the dashboard");
    }
    const live = [...this.workers].filter((w) => w.alive);
    if (live.length === 0) return undefined;
    await live[Math.floor(event.pick * live.length)].kill("SIGKILL");
    this.stats.killed.worker++;
    return this.checks.run("after kill -9 of a worker");
  }

  stop(event) {
    const p =
      event.target === "gateway"
        ? this.gateway?.proc
        : event.target === "dashboard"
          ? this.dashboard?.proc
          : [...this.workers].filter((w) => w.alive)[0];
    if (!p?.alive || p.stopped) return;
    this.stats.stops++;
    p.stopped = true;
    p.signal("SIGSTOP");
    setTimeout(() => {
      p.stopped = false;
      p.signal("SIGCONT");
    }, event.ms);
  }

  /** SIGTERM every process (SIGKILL after 10 s), at the end of the run. */
  async stopAll() {
    this.stopping = true;
    if (this.restarting) await this.restarting.catch(() => undefined);
    const procs = this.holders();
    for (const p of procs) {
      p.stopped = false;
      p.signal("SIGCONT");
    }
    if (this.gateway) this.gateway.expected = true;
    await Promise.all(
      procs.map(async (p) => {
        p.signal("SIGTERM");
        const t = setTimeout(() => p.signal("SIGKILL"), 10_000);
        await p.exited;
        clearTimeout(t);
      }),
    );
  }
}

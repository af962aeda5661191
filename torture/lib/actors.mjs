// The processes of a torture run and the actions the schedule fires at them.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runChat } from "./chat.mjs";
import { prng } from "./prng.mjs";
import { Proc, runNode } from "./proc.mjs";
import { acpRun, dashboardChat } from "./writers.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(root, "dist/cli/main.js");
const WORKER = join(root, "test/fixtures/store-worker.mjs");
const STRAY = join(root, "torture/stray-fd.mjs");
const PORTS = { HEARTH_GATEWAY_PORT: "0", HEARTH_DASHBOARD_PORT: "0", HEARTH_SCHEDULER_PORT: "0" };
/** A start that takes longer than this was blocked (by a stale lock or anything else). */
const START_MS = 30_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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
      env: { ...PORTS, ...this.daemonEnv, ...env },
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

  // --- dashboard -------------------------------------------------------

  async startDashboard() {
    const t0 = Date.now();
    const proc = new Proc([CLI, "--home", this.home, "dashboard", "run"], {
      env: { ...PORTS, ...this.daemonEnv },
      name: "dashboard",
    });
    const d = { proc, address: "", cookie: "", expected: false };
    // The dashboard's own log line for its first failed request: the answer
    // to the client says only "see its log" for an unexpected error.
    proc.onStderr = (chunk) => {
      if (this.stats.dashboard.firstFailureLog) return;
      const line = chunk
        .split("\n")
        .find((l) => l.includes('"request failed"') && l.includes('"code":"HEARTH_INTERNAL"'));
      if (line) this.stats.dashboard.firstFailureLog = line.slice(0, 6000);
    };
    this.dashboard = d;
    this.dashboardReady = (async () => {
      let ready;
      try {
        ready = await proc.json((e) => e.event === "dashboard.ready", START_MS, "dashboard.ready");
      } catch (err) {
        this.stats.staleLockBlocks.push(`dashboard start failed: ${err.message}`);
        throw err;
      }
      const res = await fetch(ready.login, { redirect: "manual" });
      d.cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
      const me = await fetch(`${ready.address}/api/me`, { headers: { cookie: d.cookie } });
      d.csrf = (await me.json()).csrfToken;
      d.address = ready.address;
      return Date.now() - t0;
    })();
    return this.dashboardReady;
  }

  async dashboardLoop() {
    const rng = prng(this.seed * 31 + 1000);
    while (!this.stopping) {
      try {
        await this.dashboardReady;
      } catch {
        if (this.stats.staleLockBlocks.length > 0) return; // the run is failing already
        await sleep(50);
        continue;
      }
      const d = this.dashboard;
      if (!d.address) {
        await sleep(50);
        continue;
      }
      const get = async (path, change) => {
        this.stats.dashboard.requests++;
        if (change) this.stats.dashboard.writes++;
        try {
          const res = await fetch(`${d.address}${path}`, {
            headers: {
              cookie: d.cookie,
              ...(change
                ? { "x-csrf-token": d.csrf, "content-type": "application/json", origin: d.address }
                : {}),
            },
            ...(change ? { method: "PATCH", body: JSON.stringify(change) } : {}),
            signal: AbortSignal.timeout(20_000),
          });
          const body = await res.json().catch(() => undefined);
          if (res.status === 200) this.stats.dashboard.ok++;
          else {
            // A damaged store (p1/p2, before its repair) may answer 500: counted apart.
            const key = this.faults.label(`${res.status} ${body?.error?.code ?? ""}`.trim());
            this.stats.dashboard.errors[key] = (this.stats.dashboard.errors[key] ?? 0) + 1;
            // The first answer of each kind, so that an unexpected one can be diagnosed.
            this.stats.dashboard.firstMessages[key] ??= `${path}: ${body?.error?.message ?? ""}`;
          }
          return body;
        } catch (err) {
          const key = `error ${err.cause?.code ?? err.name}`;
          this.stats.dashboard.errors[key] = (this.stats.dashboard.errors[key] ?? 0) + 1;
          await sleep(50);
          return undefined;
        }
      };
      const list = await get("/api/sessions?limit=20");
      const sessions = list && Object.values(list).find((v) => Array.isArray(v));
      const one = sessions?.length ? sessions[rng.int(0, sessions.length - 1)] : undefined;
      if (one?.id) await get(`/api/sessions/default/${one.id}/messages?limit=50`);
      // Row writes as a person makes them: pin or unpin, rename (never delete).
      if (one?.id && rng.next() < 0.3) {
        const change =
          rng.next() < 0.5
            ? { pinned: rng.next() < 0.5 }
            : { title: `renamed ${this.seed}-${rng.int(0, 1e9)}` };
        await get(`/api/sessions/default/${one.id}`, change);
      }
      await get(`/api/sessions?q=${encodeURIComponent(`message g${rng.int(0, 2)}`)}&limit=10`);
      await sleep(rng.int(50, 300));
    }
  }

  // --- the scheduled actions -------------------------------------------

  trace(text) {
    appendFileSync(this.traceFile, `${new Date().toISOString()} ${text}\n`);
  }

  async perform(event) {
    this.trace(`action ${JSON.stringify(event)}`);
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

  /** A short-lived writer: opens the store, writes `count` messages (each acknowledged one to the ledger), exits. */
  async runWorker(count, { strayInside = false, ddl = false, failpoint } = {}) {
    const n = this.workerSeq++;
    const env = { HEARTH_PROCESS_KIND: "worker", HEARTH_FAILPOINTS: failpoint ?? "" };
    const proc = new Proc([WORKER], { env, name: "worker" });
    const armed = failpoint?.split("=")[0];
    if (armed) this.stats.failpoints[armed].armed++;
    this.workers.add(proc);
    this.stats.workers.started++;
    let id = 0;
    const call = async (op, args = {}) => {
      const mine = ++id;
      const reply = proc.json((m) => m.id === mine, 60_000, `reply to ${op}`);
      proc.send({ id: mine, op, ...args });
      const r = await reply;
      if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code, op });
      return r.result;
    };
    try {
      await proc.json((m) => m.ready === true, START_MS, "ready");
      await call("open", { home: this.home });
      const session = await call("create", { title: `worker ${n}` });
      for (let i = 0; i < count; i++) {
        const clientId = `w${n}-${i}`;
        await call("append", { sessionId: session.id, content: `message ${clientId}`, clientId });
        this.ledger.ack(clientId, session.id, "worker");
        if (strayInside && i === Math.floor(count / 2)) {
          // Third-party code in a live holder opens and closes the database and its
          // sidecars: with plain POSIX locks that drops every lock the process holds.
          await call("stray", { paths: ["", "-wal", "-shm"].map((x) => this.db + x) });
          this.stats.strayInside++;
        }
      }
      if (ddl) await this.workerDdl(call, proc);
      await call("close");
      this.stats.workers.finished++;
    } catch (err) {
      if (err.code) {
        // Refused clearly (a window or a stopped holder): not a loss, nothing acknowledged.
        this.stats.workers.refused++;
        const key = `worker ${err.op} ${err.code}`;
        this.stats.cli[key] = (this.stats.cli[key] ?? 0) + 1;
      }
      // Otherwise it was killed: the checks after the kill judge what it acknowledged.
    } finally {
      proc.signal("SIGTERM");
      const { signal } = await proc.exited;
      this.workers.delete(proc);
      if (armed && signal === "SIGKILL" && proc.child.killed === false) {
        this.stats.failpoints[armed].fired++;
        await this.checks.run(`after ${failpoint} in a worker`);
      }
    }
  }

  /**
   * DDL from a short-lived worker (ANALYZE and an FTS merge under the
   * structural gate): it runs only when no other writer lives, else it is
   * refused with HEARTH_STORE_HELD naming each holder (pid N).
   */
  async workerDdl(call, proc) {
    this.stats.ddl.tried++;
    try {
      await call("ddl");
      this.stats.ddl.ran++;
    } catch (err) {
      if (err.code === "HEARTH_STORE_HELD" || err.code === "HEARTH_HOLDERS_UNKNOWN") {
        this.stats.ddl.refused++;
        if (!/pid \d+/.test(err.message))
          this.stats.badRefusals.push(
            `worker ${proc.pid} ddl refused naming no holder: ${err.message}`,
          );
        return;
      }
      throw err;
    }
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

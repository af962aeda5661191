import { type ChildProcess, spawn } from "node:child_process";
import { HearthError } from "../errors.js";
import { readLines } from "../process/lines.js";
import type { ChildSpec } from "./children.js";

/** A child that crashes is restarted after `restartBackoffMs` (start.restartBackoffMs, 500 ms by default), doubling per crash in a row up to this. */
const MAX_BACKOFF_MS = 30_000;
/** A child that served this long before crashing starts its backoff over. */
const STABLE_MS = 60_000;
/**
 * How long a stop waits for the children (each drains on its own bound)
 * before SIGKILL: inside the documented unit's TimeoutStopSec=90
 * (docs/scheduler.md), so the supervisor, not systemd, decides the kill and
 * says so.
 */
const STOP_GRACE_MS = 80_000;
/** Crashes in a row from which a child is in a crash loop: logged at error, not warn. */
export const CRASH_LOOP = 5;
/** EX_CONFIG: a refusal a restart cannot fix; such a child is never restarted. */
export const EX_CONFIG = 78;

export interface SupervisorOptions {
  home: string;
  /** `node dist/cli/main.js`. */
  command: string;
  args: string[];
  specs: ChildSpec[];
  /** Each child's stdout line, passed through unchanged. */
  onLine(line: string, child: string): void;
  /** Each child's stderr line (its JSON log). */
  onLogLine(line: string, child: string): void;
  /** Every child served at least once: their readiness lines. */
  onReady(ready: Map<string, Record<string, unknown>>): void;
  log(fields: Record<string, unknown> & { event: string }): void;
  /** The first restart's delay after a crash (config start.restartBackoffMs); 500 ms when not given. */
  restartBackoffMs?: number;
}

export interface SupervisorResult {
  code: number;
  error?: HearthError;
}

/** A supervised child as `hearth status` reports it (docs/cli.md). */
export interface ChildState {
  name: string;
  /** running (served at least once since its start), starting, backoff (waiting to restart), stopped, refused (exit 78). */
  state: "starting" | "running" | "backoff" | "stopped" | "refused";
  pid: number | null;
  /** When its current process started (ISO), null when none runs. */
  startedAt: string | null;
  uptimeMs: number | null;
  /** Starts after the first, crashes and `hearth restart` alike. */
  restarts: number;
  /** Crashes in a row (the backoff's exponent). */
  crashes: number;
  /** From its readiness line. */
  address: string | null;
  lastExit: { code: number | null; signal: string | null; at: string } | null;
}

export interface Supervisor {
  done: Promise<SupervisorResult>;
  stop(): void;
  status(): ChildState[];
  /** Stop the child (SIGTERM, its own drain) and start it again now; resolves with its new readiness line, rejects when it exits first. */
  restart(name: string): Promise<Record<string, unknown>>;
}

interface Running {
  spec: ChildSpec;
  child: ChildProcess | undefined;
  crashes: number;
  starts: number;
  startedAt: number;
  served: boolean;
  address: string | null;
  lastExit: ChildState["lastExit"];
  refused: boolean;
  restart: NodeJS.Timeout | undefined;
  /** Set by restart(): the next exit starts it again at once, not as a crash. */
  restarting: boolean;
  readyWaiters: { resolve(e: Record<string, unknown>): void; reject(e: Error): void }[];
  exited: Promise<void>;
}

/**
 * Run each child, pass its stdout through, restart a crashed one with
 * backoff, never restart one that exited 78 (then stop the others and
 * finish with 78 naming it), and on stop() SIGTERM them all and wait.
 */
export function supervise(o: SupervisorOptions): Supervisor {
  let stopping = false;
  let finish!: (r: SupervisorResult) => void;
  const done = new Promise<SupervisorResult>((resolve) => {
    finish = resolve;
  });
  const ready = new Map<string, Record<string, unknown>>();
  let announced = false;
  const states: Running[] = [];
  let failure: HearthError | undefined;
  const exitCodes = new Map<string, number | null>();

  const start = (state: Running) => {
    state.restart = undefined;
    state.startedAt = Date.now();
    state.served = false;
    state.address = null;
    state.starts++;
    const child = spawn(o.command, [...o.args, "--home", o.home, ...state.spec.args], {
      stdio: ["ignore", "pipe", "pipe"],
      // The child drains and exits by itself if this supervisor dies (even by SIGKILL).
      env: { ...process.env, HEARTH_SUPERVISOR_PID: String(process.pid) },
    });
    state.child = child;
    o.log({ event: "child.started", name: state.spec.name, childPid: child.pid ?? null });
    readLines(child.stderr!).on("line", (line) => o.onLogLine(line, state.spec.name));
    readLines(child.stdout!).on("line", (line) => {
      o.onLine(line, state.spec.name);
      let event: Record<string, unknown> | undefined;
      try {
        event = line.startsWith("{") ? (JSON.parse(line) as Record<string, unknown>) : undefined;
      } catch {
        event = undefined;
      }
      if (event?.event !== state.spec.readyEvent) return;
      state.served = true;
      state.address = typeof event.address === "string" ? event.address : null;
      for (const w of state.readyWaiters.splice(0)) w.resolve(event);
      ready.set(state.spec.name, event);
      if (!announced && ready.size === o.specs.length) {
        announced = true;
        o.onReady(ready);
      }
    });
    state.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        state.child = undefined;
        state.lastExit = { code, signal, at: new Date().toISOString() };
        // A restart's waiters wait for the next process, not this one's exit.
        if (!state.restarting)
          for (const w of state.readyWaiters.splice(0))
            w.reject(
              new HearthError(
                "HEARTH_CHILD_EXITED",
                `${state.spec.name} exited ${code ?? signal} before it served`,
                { resource: state.spec.name, hint: "hearth logs --level warn shows why" },
              ),
            );
        exitCodes.set(state.spec.name, code);
        resolve();
        onExit(state, code, signal);
      });
    });
  };

  const onExit = (state: Running, code: number | null, signal: NodeJS.Signals | null) => {
    const name = state.spec.name;
    if (stopping) {
      o.log({ event: "child.stopped", name, code, signal });
      return;
    }
    if (state.restarting) {
      state.restarting = false;
      o.log({ event: "child.restarting", name, code, signal });
      start(state);
      return;
    }
    if (code === EX_CONFIG) {
      state.refused = true;
      failure = new HearthError(
        "HEARTH_CHILD_REFUSED",
        `${name} exited ${EX_CONFIG}: it refused to run for a reason a restart cannot fix (its error is above); not restarted, stopping the others`,
        {
          resource: name,
          hint: "fix what it names, then run hearth start again",
          details: { child: name },
        },
      );
      o.log({ event: "child.refused", name, code });
      stopAll();
      return;
    }
    state.crashes = Date.now() - state.startedAt >= STABLE_MS ? 1 : state.crashes + 1;
    const first = o.restartBackoffMs ?? 500;
    const delay = Math.min(MAX_BACKOFF_MS, first * 2 ** (state.crashes - 1));
    o.log({
      event: "child.crashed",
      name,
      code,
      signal,
      restartInMs: delay,
      crashes: state.crashes,
    });
    if (state.crashes >= CRASH_LOOP)
      o.log({ event: "child.crash_loop", name, crashes: state.crashes, restartInMs: delay });
    state.restart = setTimeout(() => start(state), delay);
  };

  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    for (const s of states) {
      if (s.restart) clearTimeout(s.restart);
      s.restart = undefined;
      s.child?.kill("SIGTERM");
    }
    const kill = setTimeout(() => {
      for (const s of states) s.child?.kill("SIGKILL");
    }, STOP_GRACE_MS);
    void Promise.all(states.map((s) => s.exited)).then(() => {
      clearTimeout(kill);
      if (failure) return finish({ code: EX_CONFIG, error: failure });
      const bad = [...exitCodes].filter(([, c]) => c !== 0);
      if (bad.length === 0) return finish({ code: 0 });
      finish({
        code: 1,
        error: new HearthError(
          "HEARTH_INTERNAL",
          `stopped, but ${bad.map(([n, c]) => `${n} exited ${c ?? "by a signal"}`).join(", ")}`,
        ),
      });
    });
  };

  for (const spec of o.specs) {
    const state: Running = {
      spec,
      child: undefined,
      crashes: 0,
      starts: 0,
      startedAt: 0,
      served: false,
      address: null,
      lastExit: null,
      refused: false,
      restart: undefined,
      restarting: false,
      readyWaiters: [],
      exited: Promise.resolve(),
    };
    states.push(state);
    start(state);
  }

  const status = (): ChildState[] =>
    states.map((s) => {
      const pid = s.child?.pid ?? null;
      return {
        name: s.spec.name,
        state: s.refused
          ? "refused"
          : s.child
            ? s.served
              ? "running"
              : "starting"
            : s.restart
              ? "backoff"
              : "stopped",
        pid,
        startedAt: pid === null ? null : new Date(s.startedAt).toISOString(),
        uptimeMs: pid === null ? null : Date.now() - s.startedAt,
        restarts: Math.max(0, s.starts - 1),
        crashes: s.crashes,
        address: s.address,
        lastExit: s.lastExit,
      };
    });

  const restart = (name: string): Promise<Record<string, unknown>> => {
    const state = states.find((s) => s.spec.name === name);
    if (!state)
      return Promise.reject(
        new HearthError("HEARTH_USAGE", `no supervised child is called ${JSON.stringify(name)}`, {
          hint: `one of ${states.map((s) => s.spec.name).join(", ")}`,
        }),
      );
    if (stopping)
      return Promise.reject(
        new HearthError("HEARTH_DRAINING", "hearth start is stopping: nothing is restarted"),
      );
    const served = new Promise<Record<string, unknown>>((resolve, reject) => {
      state.readyWaiters.push({ resolve, reject });
    });
    o.log({ event: "child.restart_requested", name });
    if (state.child) {
      state.restarting = true;
      state.child.kill("SIGTERM");
    } else {
      if (state.restart) clearTimeout(state.restart);
      start(state);
    }
    return served;
  };

  return { done, stop: stopAll, status, restart };
}

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { HearthError } from "../errors.js";
import type { ChildSpec } from "./children.js";

/** A child that crashes is restarted after this, doubling per crash in a row up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 500;
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
/** EX_CONFIG: a refusal a restart cannot fix; such a child is never restarted. */
export const EX_CONFIG = 78;

export interface SupervisorOptions {
  home: string;
  /** `node dist/cli/main.js`. */
  command: string;
  args: string[];
  specs: ChildSpec[];
  /** Each child's stdout line, passed through unchanged. */
  onLine(line: string): void;
  /** Every child served at least once: their readiness lines. */
  onReady(ready: Map<string, Record<string, unknown>>): void;
  log(fields: Record<string, unknown> & { event: string }): void;
}

export interface SupervisorResult {
  code: number;
  error?: HearthError;
}

interface Running {
  spec: ChildSpec;
  child: ChildProcess | undefined;
  crashes: number;
  startedAt: number;
  restart: NodeJS.Timeout | undefined;
  exited: Promise<void>;
}

/**
 * Run each child, pass its stdout through, restart a crashed one with
 * backoff, never restart one that exited 78 (then stop the others and
 * finish with 78 naming it), and on stop() SIGTERM them all and wait.
 */
export function supervise(o: SupervisorOptions): { done: Promise<SupervisorResult>; stop(): void } {
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
    const child = spawn(o.command, [...o.args, "--home", o.home, ...state.spec.args], {
      stdio: ["ignore", "pipe", "inherit"],
      // The child drains and exits by itself if this supervisor dies (even by SIGKILL).
      env: { ...process.env, HEARTH_SUPERVISOR_PID: String(process.pid) },
    });
    state.child = child;
    o.log({ event: "child.started", name: state.spec.name, childPid: child.pid ?? null });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      o.onLine(line);
      let event: Record<string, unknown> | undefined;
      try {
        event = line.startsWith("{") ? (JSON.parse(line) as Record<string, unknown>) : undefined;
      } catch {
        event = undefined;
      }
      if (event?.event !== state.spec.readyEvent) return;
      ready.set(state.spec.name, event);
      if (!announced && ready.size === o.specs.length) {
        announced = true;
        o.onReady(ready);
      }
    });
    state.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        state.child = undefined;
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
    if (code === EX_CONFIG) {
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
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (state.crashes - 1));
    o.log({
      event: "child.crashed",
      name,
      code,
      signal,
      restartInMs: delay,
      crashes: state.crashes,
    });
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
      startedAt: 0,
      restart: undefined,
      exited: Promise.resolve(),
    };
    states.push(state);
    start(state);
  }
  return { done, stop: stopAll };
}

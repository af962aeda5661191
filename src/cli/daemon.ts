import type { Command } from "commander";
import { resolveLocation } from "../config/paths.js";
import { globals } from "./globals.js";
import { reportStartupError } from "./output.js";

/** A long-lived process as its `run` command drives it. */
export interface Daemon<Stopped = unknown> {
  stop(): Promise<Stopped>;
  /** Resolves with an error the process cannot serve on after: it stops as on SIGTERM and exits as reportStartupError says (78 for what a restart cannot fix). */
  fatal?: Promise<unknown>;
}

export interface DaemonCommand<D extends Daemon> {
  /** The process name: events are `<name>.ready` and `<name>.stopped`. */
  name: string;
  start(options: { home?: string; profiles: string[]; logLevel?: string }): Promise<D>;
  /** Fields of the readiness line besides event and pid. */
  ready(daemon: D): Record<string, unknown>;
  /** Fields of the stopped line besides event, pid and signal, from what stop() returned. */
  stopped?(result: Awaited<ReturnType<D["stop"]>>): Record<string, unknown>;
  /** True when the process must exit at once after the stopped line (children it left running hold its pipes). */
  exitAfterStop?(result: Awaited<ReturnType<D["stop"]>>): boolean;
  /** After the readiness line (signal handlers, a human hint on stderr). */
  onReady?(daemon: D): void;
}

/**
 * The `run` action every long-lived process shares: resolve the profiles,
 * start it (a refusal a restart cannot fix exits 78, anything else as
 * reportError says), print one JSON readiness line on stdout, wait for
 * SIGTERM or SIGINT, stop (drain) and print the stopped line. Exit 0.
 */
export function daemonAction<D extends Daemon>(
  spec: DaemonCommand<D>,
  setExit: (code: number) => void,
): (o: { profiles?: string; logLevel?: string }, command: Command) => Promise<void> {
  return async (o, command) => {
    const g = globals(command);
    let daemon: D;
    try {
      const profiles = o.profiles
        ? o.profiles
            .split(",")
            .map((p) => p.trim())
            .filter(Boolean)
        : [resolveLocation(g).profile];
      daemon = await spec.start({
        ...(g.home === undefined ? {} : { home: g.home }),
        profiles,
        ...(o.logLevel ? { logLevel: o.logLevel } : {}),
      });
    } catch (err) {
      setExit(reportStartupError(err, { json: g.json }));
      return;
    }
    let fatal: { err: unknown } | undefined;
    const signal = await new Promise<string>((resolve) => {
      daemon.fatal?.then((err) => {
        fatal = { err };
        resolve("fatal");
      });
      process.once("SIGTERM", () => resolve("SIGTERM"));
      process.once("SIGINT", () => resolve("SIGINT"));
      watchSupervisor(() => resolve("supervisor gone"));
      // Handlers first (SIGHUP: reload): a signal sent on the ready line must find them.
      spec.onReady?.(daemon);
      process.stdout.write(
        `${JSON.stringify({ event: `${spec.name}.ready`, pid: process.pid, ...spec.ready(daemon) })}\n`,
      );
    });
    const result = (await daemon.stop()) as Awaited<ReturnType<D["stop"]>>;
    const line = {
      event: `${spec.name}.stopped`,
      pid: process.pid,
      signal,
      ...spec.stopped?.(result),
    };
    // Wait until the line is out: children left running may keep pipes open.
    await new Promise<void>((resolve) =>
      process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()),
    );
    if (fatal) setExit(reportStartupError(fatal.err, { json: g.json }));
    if (spec.exitAfterStop?.(result)) process.exit(fatal ? (process.exitCode as number) : 0);
  };
}

/**
 * Under `hearth start` (HEARTH_SUPERVISOR_PID set), stop like on SIGTERM
 * once the supervisor is gone: even a SIGKILLed supervisor never leaves
 * its children running unsupervised. The parent pid is what the kernel
 * says now; it changes when the parent dies.
 */
function watchSupervisor(stop: () => void): void {
  const supervisor = Number(process.env.HEARTH_SUPERVISOR_PID);
  if (!Number.isInteger(supervisor) || supervisor <= 0) return;
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return;
    clearInterval(timer);
    stop();
  }, 500);
  timer.unref();
}

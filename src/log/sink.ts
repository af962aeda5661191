import { prettyLine } from "./pretty.js";
import { type EventRing, parseLogLine } from "./ring.js";

/** Where a process's log lines go: its stderr (or a test's stream). */
export interface LogOut {
  write(text: string): unknown;
  isTTY?: boolean;
  on?(event: "error", listener: (err: Error) => void): unknown;
}

const quieted = new WeakSet<object>();

/**
 * A log destination (pino's `stream`, the scheduler's log, the
 * supervisor's): each JSON line is kept in `ring` when given, and written
 * to `out` as it came (JSON) or, when `out` is a terminal, as a pretty
 * line. A closed stderr (the supervisor that read it is gone) loses the
 * lines, never the process: its write errors are ignored.
 */
export function logSink(options: {
  out?: LogOut;
  ring?: EventRing;
  pretty?: boolean;
  /** The process name events without a `proc` field get. */
  proc?: string;
  /** The level of a line that is not JSON (a child's error report is text: error). */
  plainLevel?: number;
}): {
  write(chunk: string): boolean;
} {
  const out = options.out ?? process.stderr;
  if (out.on && !quieted.has(out)) {
    quieted.add(out);
    out.on("error", () => undefined);
  }
  const pretty = options.pretty ?? out.isTTY === true;
  return {
    write(chunk: string): boolean {
      for (const line of String(chunk).split("\n")) {
        if (line === "") continue;
        const event =
          options.ring || pretty
            ? parseLogLine(line, options.proc ? { proc: options.proc } : {}, options.plainLevel)
            : undefined;
        if (event) options.ring?.push(event);
        out.write(pretty && event ? `${prettyLine(event, { color: true })}\n` : `${line}\n`);
      }
      return true;
    },
  };
}

import { LEVELS } from "../log/levels.js";
import { logSink } from "../log/sink.js";

/** pino-style JSON lines on stderr: {level, time, proc, pid, event, msg, ...}. */
export interface Log {
  info(fields: Record<string, unknown> & { event: string }, msg?: string): void;
  warn(fields: Record<string, unknown> & { event: string }, msg?: string): void;
  error(fields: Record<string, unknown> & { event: string }, msg?: string): void;
}

/** The scheduler's log, written to `sink` (stderr, pretty on a terminal, by default). */
export function jsonLog(
  level: string = "info",
  sink: { write(text: string): unknown } = logSink({ proc: "scheduler" }),
): Log {
  const min = LEVELS[level as keyof typeof LEVELS] ?? LEVELS.info;
  const write =
    (n: number) =>
    (fields: Record<string, unknown>, msg?: string): void => {
      if (n < min) return;
      sink.write(
        `${JSON.stringify({ level: n, time: Date.now(), proc: "scheduler", pid: process.pid, ...fields, ...(msg ? { msg } : {}) })}\n`,
      );
    };
  return { info: write(LEVELS.info), warn: write(LEVELS.warn), error: write(LEVELS.error) };
}

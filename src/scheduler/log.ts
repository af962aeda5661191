/** pino-style JSON lines on stderr: {level, time, proc, pid, event, msg, ...}. */
export interface Log {
  info(fields: Record<string, unknown> & { event: string }, msg?: string): void;
  warn(fields: Record<string, unknown> & { event: string }, msg?: string): void;
  error(fields: Record<string, unknown> & { event: string }, msg?: string): void;
}

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export function jsonLog(
  level: string = "info",
  stream: NodeJS.WritableStream = process.stderr,
): Log {
  const min = LEVELS[level as keyof typeof LEVELS] ?? LEVELS.info;
  const write =
    (n: number) =>
    (fields: Record<string, unknown>, msg?: string): void => {
      if (n < min) return;
      stream.write(
        `${JSON.stringify({ level: n, time: Date.now(), proc: "scheduler", pid: process.pid, ...fields, ...(msg ? { msg } : {}) })}\n`,
      );
    };
  return { info: write(30), warn: write(40), error: write(50) };
}

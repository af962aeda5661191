import { createRequire } from "node:module";

export interface Progress {
  tick(n?: number): void;
  stop(): void;
}

const QUIET: Progress = { tick: () => undefined, stop: () => undefined };

/** A progress bar on stderr for long work, only on a terminal: pipes, cron and --json stay quiet. */
export function progress(total: number, label: string, json: boolean): Progress {
  if (json || !process.stderr.isTTY || total < 2) return QUIET;
  // Loaded only for a bar on a terminal: every other run of the CLI skips it.
  const cliProgress = createRequire(import.meta.url)(
    "cli-progress",
  ) as typeof import("cli-progress");
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {value}/{total}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return { tick: (n = 1) => bar.increment(n), stop: () => bar.stop() };
}

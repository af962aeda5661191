import { createRequire } from "node:module";
import type { OnProgress, StepProgress } from "../store/progress.js";
import type { GlobalOptions } from "./globals.js";

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

/**
 * Progress of one long operation (backup, restore, optimize, repair) as
 * --progress asks: `json` writes one line per step on stderr,
 * `{"progress":{"op","phase","done","total","unit"}}`; `auto` draws a bar on
 * stderr when it is a terminal and --json is off; otherwise nothing.
 */
export function stepProgress(g: GlobalOptions): { onProgress: OnProgress; stop(): void } {
  if (g.progress === "json") {
    return {
      onProgress: (step) => process.stderr.write(`${JSON.stringify({ progress: step })}\n`),
      stop: () => undefined,
    };
  }
  if (g.progress === "none" || g.json || !process.stderr.isTTY) {
    return { onProgress: () => undefined, stop: () => undefined };
  }
  const cliProgress = createRequire(import.meta.url)(
    "cli-progress",
  ) as typeof import("cli-progress");
  let bar: InstanceType<typeof cliProgress.SingleBar> | undefined;
  let phase = "";
  return {
    onProgress(step: StepProgress) {
      if (!bar) {
        bar = new cliProgress.SingleBar(
          {
            format: `${step.op} {phase} [{bar}] {percentage}%`,
            stream: process.stderr,
            hideCursor: true,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(step.total, step.done, { phase: step.phase });
      } else if (step.phase !== phase) bar.setTotal(step.total);
      phase = step.phase;
      bar.update(step.done, { phase: step.phase });
    },
    stop: () => bar?.stop(),
  };
}

import type { OnProgress } from "../store/progress.js";

/**
 * Progress of an operation made of named phases: each call reports the
 * phase starting as step k of n (unit "steps"); done() reports n of n.
 */
export function phases(
  op: string,
  names: readonly string[],
  onProgress: OnProgress | undefined,
): { start(phase: string): void; done(): void } {
  const total = names.length;
  return {
    start(phase) {
      onProgress?.({ op, phase, done: Math.max(0, names.indexOf(phase)), total, unit: "steps" });
    },
    done() {
      onProgress?.({ op, phase: "done", done: total, total, unit: "steps" });
    },
  };
}

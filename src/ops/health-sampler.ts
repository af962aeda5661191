import type { HearthConfig } from "../config/schema.js";
import type { Store } from "../store/api.js";

export interface HealthSamplerLog {
  warn(event: object, message: string): void;
}

/**
 * The long-lived processes' health sampling: every
 * `maintenance.healthSampleMs` (and, unless told otherwise, once at start), add a health sample to
 * each store unless another process did so recently (the check is cheap and
 * read-only; the write is one small row). `write(profile, fn)` runs `fn` on
 * a store that may write: the gateway's own writer, or a writer the
 * dashboard opens for that one write. A failure is logged and the next tick
 * tries again: a sample is never worth a stalled or failed turn.
 */
export function startHealthSampler(options: {
  config: HearthConfig;
  profiles: string[];
  reader: (profile: string) => Store;
  write: (profile: string, fn: (store: Store) => Promise<unknown>) => Promise<unknown>;
  log: HealthSamplerLog;
  /** Sample at start too (the gateway); the dashboard waits one period, so it writes nothing at start. */
  immediate?: boolean;
}): { stop(): void; tick(): Promise<void> } {
  const { healthSampleMs, healthKeepDays } = options.config.maintenance;
  const record = { minIntervalMs: healthSampleMs / 2, keepMs: healthKeepDays * 86_400_000 };
  let running: Promise<void> | null = null;
  const tick = async () => {
    for (const profile of options.profiles) {
      try {
        const latest = await options.reader(profile).stats.latest();
        if (latest && Date.now() - latest.at < record.minIntervalMs) continue;
        await options.write(profile, (store) => store.stats.record(record));
      } catch (err) {
        options.log.warn(
          { event: "health.sample_failed", profile, err },
          "health sample not written; the next one will try again",
        );
      }
    }
  };
  const run = () => {
    running ??= tick().finally(() => {
      running = null;
    });
    return running;
  };
  if (options.immediate !== false) void run();
  const timer = setInterval(() => void run(), healthSampleMs);
  timer.unref();
  return { stop: () => clearInterval(timer), tick: run };
}

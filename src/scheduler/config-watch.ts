import { statSync } from "node:fs";
import { loadConfig } from "../config/load.js";
import { configPath } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";

/**
 * Re-read config.json when it changes (inode, size or mtime), twice a
 * second: `hearth cron add|remove|pause|resume` edit it under a running
 * scheduler. An invalid file is reported and the old configuration kept.
 */
export function watchConfig(
  home: string,
  on: { changed(next: HearthConfig): void; invalid(err: unknown): void },
): { stop(): void } {
  let seen = configStamp(home);
  const timer = setInterval(() => {
    const stamp = configStamp(home);
    if (stamp === seen) return;
    seen = stamp;
    let next: HearthConfig;
    try {
      next = loadConfig({ home });
    } catch (err) {
      on.invalid(err);
      return;
    }
    on.changed(next);
  }, 500);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function configStamp(home: string): string {
  try {
    const st = statSync(configPath(home));
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "absent";
  }
}

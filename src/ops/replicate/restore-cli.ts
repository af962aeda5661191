import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../config/load.js";
import { backupsDir } from "../../config/paths.js";
import { HearthError } from "../../errors.js";
import { ensurePrivateDir } from "../../files/create.js";
import { buildPointInTime, type PointInTime, restoreIntoNewHome } from "./restore-from.js";
import { openTarget, targetConfig } from "./target.js";

/** `--at`: an ISO 8601 time (a zone is required) or milliseconds since the epoch. */
export function parseAt(value: string): number {
  const ms = /^\d{10,}$/.test(value)
    ? Number(value)
    : /(Z|[+-]\d\d:?\d\d)$/i.test(value)
      ? Date.parse(value)
      : Number.NaN;
  if (!Number.isFinite(ms))
    throw new HearthError("HEARTH_USAGE", `--at ${JSON.stringify(value)} is not a time`, {
      hint: "an ISO 8601 time with its zone (2026-12-05T14:30:00Z) or milliseconds since the epoch",
    });
  return ms;
}

/**
 * `hearth restore --from <target>`: into a new home (`into`), or over the
 * live store through `replace` (the offline restore of a backup file, with
 * its gate, forensic copy and optional window), from a point-in-time
 * database rebuilt next to the store first.
 */
export async function restoreFromTarget(options: {
  home: string;
  profile: string;
  from: string;
  at?: number | undefined;
  into?: string | undefined;
  replace: (file: string) => Promise<unknown>;
}): Promise<PointInTime & { replaced?: unknown }> {
  const config = loadConfig({ home: options.home });
  const target = await openTarget(targetConfig(config, options.from), options.home);
  if (options.into !== undefined)
    return restoreIntoNewHome(target, options.profile, options.at, options.into, config);
  const dir = backupsDir(options.home);
  ensurePrivateDir(dir);
  const file = join(dir, `.staging-${options.profile}-${process.pid}-${Date.now()}.tmp`);
  try {
    const built = await buildPointInTime(target, options.profile, options.at, file, config);
    return { ...built, replaced: await options.replace(file) };
  } finally {
    rmSync(file, { force: true });
  }
}

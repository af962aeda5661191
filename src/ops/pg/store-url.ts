import { loadConfig } from "../../config/load.js";
import { resolveLocation } from "../../config/paths.js";

/**
 * The profile's configured PostgreSQL URL (store.url), or undefined for the
 * SQLite store: the commands with a PostgreSQL view (backup, restore,
 * doctor, ps) branch on it before opening anything.
 */
export function configuredStoreUrl(
  options: { home?: string | undefined; profile?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): { home: string; profile: string; url: string | undefined; keep: number } {
  const { home, profile } = resolveLocation(options, env);
  const config = loadConfig({ home, env });
  return { home, profile, url: config.store.url, keep: config.backup.keep };
}

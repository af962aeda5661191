import { loadConfigLazily } from "../../config/load-lazily.js";
import { resolveLocation } from "../../config/paths.js";

/**
 * The profile's configured PostgreSQL URL (store.url), or undefined for the
 * SQLite store: the commands with a PostgreSQL view (backup, restore,
 * doctor, ps) branch on it before opening anything.
 */
export async function configuredStoreUrl(
  options: { home?: string | undefined; profile?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ home: string; profile: string; url: string | undefined; keep: number }> {
  const { home, profile } = resolveLocation(options, env);
  // Without a config file or HEARTH_* variable this loads no schema (zod).
  const config = await loadConfigLazily({ home, env });
  return { home, profile, url: config.store.url, keep: config.backup.keep };
}

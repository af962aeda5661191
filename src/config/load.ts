import { parseStoreUrl } from "../store/pg/url.js";
import { type ConfigLayers, merge, readLayers } from "./layers.js";
import { configPath } from "./paths.js";
import type { HearthConfig, HearthConfigInput } from "./schema.js";
import { validateConfig } from "./validate.js";

export interface LoadConfigOptions {
  home: string;
  /** Highest precedence: flags or the library caller's options. */
  overrides?: HearthConfigInput;
  env?: NodeJS.ProcessEnv;
}

/** Precedence: defaults < `$HEARTH_HOME/config.json` < `HEARTH_*` env < overrides. */
export function loadConfig({
  home,
  overrides,
  env = process.env,
}: LoadConfigOptions): HearthConfig {
  return validateLayers(readLayers(configPath(home), env), overrides);
}

/** Validates each layer, then the merged result (loadConfigLazily calls it too). */
export function validateLayers(
  { file, fromFile, fromEnv }: ConfigLayers,
  overrides: HearthConfigInput | undefined,
): HearthConfig {
  // Validate each layer on its own so an error names the layer that holds it.
  validateConfig(fromFile, file);
  validateConfig(fromEnv, "environment (HEARTH_*)");
  if (overrides !== undefined) validateConfig(overrides, "options");
  const config = validateConfig(merge(merge(fromFile, fromEnv), overrides ?? {}), file);
  // A store URL is checked where it is read, so a bad one never reaches a connection attempt.
  if (config.store.url !== undefined) parseStoreUrl(config.store.url);
  return config;
}

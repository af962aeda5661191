import { emptyConfig, readLayers } from "./layers.js";
import type { LoadConfigOptions } from "./load.js";
import { configPath } from "./paths.js";
import type { HearthConfig } from "./schema.js";

/**
 * loadConfig for async callers (openStore, doctor) that loads the schema
 * (zod) only when there is something to validate: with no config file keys,
 * no HEARTH_* variable and no override, the result is the schema's defaults
 * (defaults.ts) and a CLI command starts without zod (docs/benchmarks.md,
 * workload 12). Same result and the same errors as loadConfig otherwise.
 */
export async function loadConfigLazily({
  home,
  overrides,
  env = process.env,
}: LoadConfigOptions): Promise<HearthConfig> {
  const layers = readLayers(configPath(home), env);
  return (
    emptyConfig(layers, overrides) ?? (await import("./load.js")).validateLayers(layers, overrides)
  );
}

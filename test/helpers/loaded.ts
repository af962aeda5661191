import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempHome } from "./home.js";
import { type RunResult, run } from "./process.js";

const RECORD = fileURLToPath(new URL("../fixtures/record-loaded.mjs", import.meta.url));

/**
 * `node <args>` run to its exit with every module it resolves recorded (a
 * `--import` preload, test/fixtures/record-loaded.mjs): its result and the
 * node_modules packages it loaded, ESM and CommonJS alike, and the public
 * Node built-ins it loaded (the preload's own included). `env` replaces
 * the variables it names; an undefined value removes one.
 */
export async function runRecordingPackages(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<RunResult & { packages: string[]; builtins: string[] }> {
  const file = join(dirname(tempHome()), "loaded.txt");
  writeFileSync(file, "");
  const result = await run(process.execPath, ["--import", RECORD, ...args], {
    env: { ...env, HEARTH_TEST_LOADED: file },
  });
  const packages = new Set<string>();
  const builtins = new Set<string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line);
    if (m) packages.add(m[1]!);
    if (line.startsWith("builtin:")) builtins.add(line.slice("builtin:".length));
  }
  return Object.assign(result, { packages: [...packages].sort(), builtins: [...builtins].sort() });
}

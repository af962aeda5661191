import { fileURLToPath } from "node:url";
import { type RunResult, run } from "./process.js";

/** The built CLI; HEARTH_TEST_CLI runs the tests against another build of it. */
export const CLI =
  process.env.HEARTH_TEST_CLI ?? fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface CliOptions {
  /** Passed as `--home <home>` before the other arguments. */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (otherwise stdin is closed at once). */
  input?: string;
  uid?: number;
  gid?: number;
}

/** `hearth <args>` as a child process, run to its exit: exit code, stdout, stderr, json(). */
export function runCli(args: string[], options: CliOptions = {}): Promise<RunResult> {
  const { home, ...rest } = options;
  const argv = home === undefined ? args : ["--home", home, ...args];
  return run(process.execPath, [CLI, ...argv], rest);
}

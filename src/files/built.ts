import { fileURLToPath } from "node:url";

// Where hearth's own built files are (the CLI, the worker-thread scripts,
// the dashboard's web assets, package.json), for code that spawns or loads
// them. One anchor for all of them, because a module's location depends on
// how it was loaded:
//   - dist/<folder>/<file>.js, as tsc writes it: one folder below dist/;
//   - dist/cli/<chunk>.js in the CLI's bundle (scripts/bundle-cli.mjs), where
//     code from every folder lands, again one folder below dist/;
//   - src/files/built.ts under the test runner, which runs the sources while
//     child processes and threads run dist/ (built before the tests start).
// Hence this module sits one folder below src/, and `new URL("./x.js",
// import.meta.url)` appears nowhere else.

const DIST = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "../../dist/" : "../", import.meta.url),
);

/** The absolute path of `relative` (e.g. "cli/main.js") under the built dist/ folder. */
export function builtFile(relative: string): string {
  return DIST + relative;
}

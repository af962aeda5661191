import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import fsx from "fs-native-extensions";
import { staleSources } from "./dist-staleness.js";

// Child processes run dist/ while the test code runs src/: a test file run
// without a rebuild would test stale code on one side. Before any test,
// rebuild dist/ when a source is newer than its output (dist-staleness.ts).
// Checking costs a few milliseconds; the build a minute under load, so the
// check decides. `npm test` builds in pretest, so there it finds dist/ fresh.
//
// Two runs in one checkout share dist/. dist/.build-lock (an OFD lock: the
// kernel drops it when its process dies, so no stale holder) keeps one from
// rewriting dist/ under the other: a rebuild holds it exclusively, a run
// holds it shared until its teardown. A run that finds dist/ stale waits for
// the runs in progress, then checks again: the one before it may have built.

export type DistLock = { release(): void };

function build(root: string, stale: string[]): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const shown = stale.slice(0, 3).join(", ") + (stale.length > 3 ? `, … (${stale.length})` : "");
  console.log(`dist/ is older than ${shown}: building (tsc, then the zod and CLI bundles)`);
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
  // The steps of `npm run build` after tsc that shape dist/ (the web
  // dashboard's vite build aside): without them the CLI under test would be
  // tsc's module-per-file output, not the bundle `npm test` builds and ships.
  for (const script of ["scripts/bundle-zod.mjs", "scripts/bundle-cli.mjs"])
    execFileSync(process.execPath, [join(root, script)], { cwd: root, stdio: "inherit" });
}

async function lock(fd: number, shared: boolean, what: string): Promise<void> {
  if (fsx.tryLock(fd, 0, 0, { shared })) return;
  console.log(`another test run in this checkout is ${what} dist/: waiting for it`);
  await fsx.waitForLock(fd, 0, 0, { shared });
}

/** Builds dist/ if stale, then holds it (shared) until release(): no other run rebuilds it meanwhile. */
export async function freshDist(root: string): Promise<DistLock> {
  mkdirSync(join(root, "dist"), { recursive: true });
  const fd = openSync(join(root, "dist/.build-lock"), "a+");
  try {
    // At most one build per run, so a check that finds dist/ stale even
    // after a build (a source dated in the future) cannot loop.
    let built = false;
    for (;;) {
      await lock(fd, true, "building");
      if (built || staleSources(root).length === 0) break;
      fsx.unlock(fd, 0, 0);
      await lock(fd, false, "using");
      try {
        // Checked again: the run that held the lock may have built it.
        const stale = staleSources(root);
        if (stale.length > 0) build(root, stale);
        built = true;
      } finally {
        fsx.unlock(fd, 0, 0);
      }
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return {
    release() {
      closeSync(fd);
    },
  };
}

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

// Child processes run dist/ while the test code runs src/: a test file run
// without a rebuild would test stale code on one side. Before any test,
// rebuild dist/ when a source is newer than its output (or has none).
// Checking costs a few milliseconds; `tsc -p tsconfig.build.json` costs
// 3-4 s even when nothing changed (1.6 s with --incremental), so the check
// decides. `npm test` builds in pretest, so there it finds dist/ fresh.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Sources newer than their output under dist/ (or without one), relative to the root. */
export function staleSources(root = ROOT): string[] {
  const configs = ["tsconfig.json", "tsconfig.build.json"].map(
    (f) => statSync(join(root, f)).mtimeMs,
  );
  const newestConfig = Math.max(...configs);
  const stale: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        const rel = relative(join(root, "src"), path);
        const out = join(root, "dist", rel.replace(/\.ts$/, ".js"));
        const built = existsSync(out) ? statSync(out).mtimeMs : -1;
        if (built < Math.max(statSync(path).mtimeMs, newestConfig))
          stale.push(relative(root, path));
      }
    }
  };
  visit(join(root, "src"));
  return stale;
}

export default function setup(): void {
  const stale = staleSources();
  if (stale.length === 0) return;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const shown = stale.slice(0, 3).join(", ") + (stale.length > 3 ? `, … (${stale.length})` : "");
  console.log(`dist/ is older than ${shown}: building (tsc, then the zod and CLI bundles)`);
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  // The steps of `npm run build` after tsc that shape dist/ (the web
  // dashboard's vite build aside): without them the CLI under test would be
  // tsc's module-per-file output, not the bundle `npm test` builds and ships.
  for (const script of ["scripts/bundle-zod.mjs", "scripts/bundle-cli.mjs"])
    execFileSync(process.execPath, [join(ROOT, script)], { cwd: ROOT, stdio: "inherit" });
}

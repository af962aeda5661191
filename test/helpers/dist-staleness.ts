import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

// Which sources are newer than what dist/ holds of them. Most of src/ maps
// file to file (tsc: src/x/y.ts -> dist/x/y.js). src/cli/ does not: the
// build bundles tsc's dist/cli/*.js into dist/cli/main.js and chunks and
// deletes them (scripts/bundle-cli.mjs), writing dist/cli/bundle-inputs.json
// last. So a src/cli/ file is judged against that stamp, and the bundle is
// stale too when a file of dist/ it holds was rebuilt after it (tsc alone).

const BUNDLE_STAMP = "dist/cli/bundle-inputs.json";

function mtime(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : -1;
}

/** When the CLI bundle was built (-1: never, or tsc's main.js replaced it since). */
function bundleTime(root: string): number {
  const stamp = mtime(join(root, BUNDLE_STAMP));
  return mtime(join(root, "dist/cli/main.js")) > stamp ? -1 : stamp;
}

function bundleInputs(root: string): string[] {
  try {
    const { inputs } = JSON.parse(readFileSync(join(root, BUNDLE_STAMP), "utf8"));
    return Array.isArray(inputs) ? inputs : [];
  } catch {
    return [];
  }
}

/** Sources newer than their output under dist/ (or without one), relative to the root. */
export function staleSources(root: string): string[] {
  const newestConfig = Math.max(
    ...["tsconfig.json", "tsconfig.build.json"].map((f) => mtime(join(root, f))),
  );
  const bundle = bundleTime(root);
  const bundleScript = mtime(join(root, "scripts/bundle-cli.mjs"));
  const stale = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        const rel = relative(join(root, "src"), path);
        const source = Math.max(statSync(path).mtimeMs, newestConfig);
        const built = rel.startsWith("cli/")
          ? bundle < bundleScript
            ? -1
            : bundle
          : mtime(join(root, "dist", rel.replace(/\.ts$/, ".js")));
        if (built < source) stale.add(relative(root, path));
      }
    }
  };
  visit(join(root, "src"));
  // A module the bundle holds, rebuilt by tsc after it: the bundle has the old code.
  for (const input of bundleInputs(root))
    if (!input.startsWith("cli/") && mtime(join(root, "dist", input)) > bundle)
      stale.add(join("src", input.replace(/\.js$/, ".ts")));
  return [...stale];
}

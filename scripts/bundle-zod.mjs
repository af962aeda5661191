#!/usr/bin/env node
// Part of `npm run build`, after tsc: replaces dist/config/zod.js (the few
// zod functions the config schema uses, src/config/zod.ts) with one bundled
// file holding only them. `import "zod"` loads ~95 modules, 48 of them
// locales, which cost a CLI command most of its start-up; the bundle loads
// in a fraction of that. Same zod version, same code: only what is unused is
// left out. Without this step dist/ still works (it imports "zod").
import { renameSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const entry = fileURLToPath(new URL("../dist/config/zod.js", import.meta.url));
const staged = `${entry}.bundle-tmp.js`;
await build({
  input: entry,
  platform: "node",
  logLevel: "warn",
  output: { file: staged, format: "esm", minify: false, sourcemap: false },
});
renameSync(staged, entry);

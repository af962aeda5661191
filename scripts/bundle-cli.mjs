#!/usr/bin/env node
// Part of `npm run build`, after tsc and bundle-zod: replaces dist/cli/main.js
// (the `hearth` command) with a bundle of it and of every module it loads
// from dist/, written as dist/cli/main.js plus dist/cli/hearth-*.js chunks.
// A command loads a handful of files instead of 40 to 80 separate modules,
// each of which Node resolves, reads and links on its own: that was most
// of a small command's start-up (docs/benchmarks.md, workload 12).
// Packages from node_modules stay external, and a command's modules are
// still loaded only when that command runs (each dynamic import is a chunk).
// Code that finds hearth's other built files goes through src/files/built.ts,
// which works from any file one folder below dist/, as every chunk is.
// Without this step dist/ still works: main.js is then tsc's own output.
import { readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const cli = fileURLToPath(new URL("../dist/cli/", import.meta.url));
const staging = fileURLToPath(new URL("../dist/cli-bundle-tmp/", import.meta.url));
const CHUNK = /^hearth-.*\.js$/;
const require = createRequire(import.meta.url);

// CommonJS packages every command loads. Imported from ESM, Node first runs
// its CommonJS export lexer over each (~5 ms for these three at start-up);
// the bundle loads them with require() instead, exporting what Node's own
// interop would: module.exports as the default, its keys as named exports.
const CJS = ["better-sqlite3", "fs-native-extensions", "commander"];
// fs-native-extensions finds its addon through require-addon, whose
// resolver (bare-addon-resolve, bare-module-resolve, bare-semver) costs
// ~15 ms of every command that opens a store; loading the prebuilt addon
// for this platform directly costs ~3. The bundle puts the addon in
// require.cache as the package's binding.js, so the package's own code runs
// unchanged on it. Where the direct load fails (musl, another layout, a
// package version without that file) the package resolves it as before.
const PREBUILT_LOCKS = `
{
  const require = createRequire(import.meta.url);
  try {
    const binding = require.resolve("fs-native-extensions/binding.js");
    if (!require.cache[binding] && !require("node:fs").existsSync("/etc/alpine-release")) {
      const { dirname, join } = require("node:path");
      const addon = require(join(dirname(binding), "prebuilds", process.platform + "-" + process.arch, "fs-native-extensions.node"));
      const Module = require("node:module");
      const m = new Module(binding);
      m.filename = binding;
      m.exports = addon;
      m.loaded = true;
      require.cache[binding] = m;
    }
  } catch {}
}`;

const requireCjs = {
  name: "require-cjs-packages",
  resolveId(id) {
    return CJS.includes(id) ? `\0cjs:${id}` : undefined;
  },
  load(id) {
    if (!id.startsWith("\0cjs:")) return undefined;
    const name = id.slice("\0cjs:".length);
    const keys = Object.keys(require(name)).filter(
      (k) => k !== "default" && /^[A-Za-z_$][\w$]*$/.test(k),
    );
    return [
      'import { createRequire } from "node:module";',
      ...(name === "fs-native-extensions" ? [PREBUILT_LOCKS] : []),
      `const m = createRequire(import.meta.url)(${JSON.stringify(name)});`,
      "export default m;",
      ...keys.map((k) => `export const ${k} = m.${k};`),
    ].join("\n");
  },
};

// Bundling a bundle would keep the old chunks' code and drop this script's
// changes: the input must be tsc's output (npm run build runs tsc first).
if (/from "\.\/hearth-/.test(readFileSync(join(cli, "main.js"), "utf8")))
  throw new Error("dist/cli/main.js is already a bundle: run tsc -p tsconfig.build.json first");
rmSync(staging, { recursive: true, force: true });
await build({
  input: join(cli, "main.js"),
  platform: "node",
  logLevel: "warn",
  plugins: [requireCjs],
  // Packages (bare specifiers, node: built-ins) are loaded from node_modules as before.
  external: (id) =>
    !id.startsWith(".") && !id.startsWith("/") && !CJS.includes(id) && !id.startsWith("\0"),
  output: {
    dir: staging,
    format: "esm",
    entryFileNames: "main.js",
    chunkFileNames: "hearth-[name]-[hash].js",
    minify: false,
    sourcemap: false,
  },
});
for (const name of readdirSync(cli)) if (CHUNK.test(name)) rmSync(join(cli, name));
for (const name of readdirSync(staging)) renameSync(join(staging, name), join(cli, name));
rmSync(staging, { recursive: true, force: true });

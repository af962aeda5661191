#!/usr/bin/env node
// Part of `npm run build`, after tsc and bundle-zod: replaces dist/cli/main.js
// (the `hearth` command) with a CommonJS bundle of it and of every module it
// loads from dist/, written as dist/cli/main.js plus dist/cli/hearth-*.js
// chunks, and marks dist/cli/ as CommonJS (dist/cli/package.json).
// - One file per chunk instead of 40 to 80 separate modules, each of which
//   Node would resolve, read and link on its own.
// - CommonJS, because an ES-module entry point starts Node's ES-module
//   loader: measured here, the same bundle run through a one-line ES-module
//   entry took ~38 ms more per command than run directly, and the ES-module
//   chunks ~26 ms more than these (docs/benchmarks-history.md).
// Packages from node_modules stay external (require()d; those published only
// as ES modules load through Node's require of ES modules), and a command's
// modules are still loaded only when that command runs (each dynamic import
// is a chunk). Code that finds hearth's other built files goes through
// src/files/built.ts, which works from any file one folder below dist/, as
// every chunk is. tsc's other output in dist/cli/ is removed: nothing loads
// it, and under the CommonJS mark it would no longer load.
// Last, it writes dist/cli/bundle-inputs.json: the files of dist/ the bundle
// holds. The tests' rebuild check (test/helpers/dist-staleness.ts) reads it,
// since src/cli/*.ts have no output file of their own once bundled.
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const cli = fileURLToPath(new URL("../dist/cli/", import.meta.url));
const staging = fileURLToPath(new URL("../dist/cli-bundle-tmp/", import.meta.url));

// fs-native-extensions finds its addon through require-addon, whose
// resolver (bare-addon-resolve, bare-module-resolve, bare-semver) costs
// ~15 ms of every command that opens a store; loading the prebuilt addon
// for this platform directly costs ~3. The bundle puts the addon in
// require.cache as the package's binding.js, so the package's own code runs
// unchanged on it. Where the direct load fails (musl, another layout, a
// package version without that file) the package resolves it as before.
const PREBUILT_LOCKS = `
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
module.exports = require("fs-native-extensions");`;

const PREBUILT_ID = "\0prebuilt:fs-native-extensions";
const prebuiltLocks = {
  name: "fs-native-extensions-prebuilt",
  resolveId(id, importer) {
    if (id !== "fs-native-extensions") return undefined;
    // The package itself, from the module below, stays external.
    return importer === PREBUILT_ID ? { id, external: true } : PREBUILT_ID;
  },
  load(id) {
    return id === PREBUILT_ID ? { code: PREBUILT_LOCKS, moduleType: "js" } : undefined;
  },
};

// commander is bundled (its five files resolved and read once, at build
// time, not at every command) and its one use of node:child_process, the
// spawn of an executable subcommand (hearth defines none), gets the module
// on first use: loaded at start it took child_process, net and the stream
// modules with it, ~7 ms of every command (docs/benchmarks-history.md).
const LAZY_CHILD_PROCESS = `
let real;
const load = () => (real ??= require("node:child_process"));
module.exports = new Proxy({}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
});`;
const LAZY_CHILD_PROCESS_ID = "\0lazy:node:child_process";
const commandersChildProcess = (id, importer) =>
  (id === "node:child_process" || id === "child_process") &&
  importer?.includes("/node_modules/commander/") === true;
const lazyChildProcess = {
  name: "commander-lazy-child-process",
  resolveId(id, importer) {
    return commandersChildProcess(id, importer) ? LAZY_CHILD_PROCESS_ID : undefined;
  },
  load(id) {
    return id === LAZY_CHILD_PROCESS_ID
      ? { code: LAZY_CHILD_PROCESS, moduleType: "js" }
      : undefined;
  },
};

// A CommonJS chunk has no import.meta; every use in hearth's sources is
// import.meta.url, the module's own file URL.
const IMPORT_META_URL = 'require("node:url").pathToFileURL(__filename).href';
const importMetaUrl = {
  name: "import-meta-url",
  transform(code) {
    return code.includes("import.meta.url")
      ? code.replaceAll("import.meta.url", IMPORT_META_URL)
      : null;
  },
};

// Bundling a bundle would keep the old chunks' code and drop this script's
// changes: the input must be tsc's output (npm run build runs tsc first).
if (!/^import /m.test(readFileSync(join(cli, "main.js"), "utf8")))
  throw new Error("dist/cli/main.js is not tsc's output: run tsc -p tsconfig.build.json first");
rmSync(staging, { recursive: true, force: true });
const bundled = await build({
  input: join(cli, "main.js"),
  platform: "node",
  logLevel: "warn",
  plugins: [prebuiltLocks, lazyChildProcess, importMetaUrl],
  // Packages (bare specifiers, node: built-ins) are loaded from node_modules
  // as before, but for commander (above).
  external: (id, importer) =>
    !commandersChildProcess(id, importer) &&
    !id.startsWith(".") &&
    !id.startsWith("/") &&
    !id.startsWith("\0") &&
    id !== "fs-native-extensions" &&
    id !== "commander",
  output: {
    dir: staging,
    format: "cjs",
    entryFileNames: "main.js",
    chunkFileNames: "hearth-[name]-[hash].js",
    minify: false,
    sourcemap: false,
  },
});
for (const name of readdirSync(staging)) {
  const code = readFileSync(join(staging, name), "utf8");
  if (code.includes("import.meta"))
    throw new Error(`${name}: import.meta left in a CommonJS chunk`);
}
// tsc's output (main.js, commands/, …) and the previous bundle go; the new one moves in.
for (const name of readdirSync(cli)) {
  const path = join(cli, name);
  if (statSync(path).isDirectory() || /\.js(\.map)?$/.test(name)) rmSync(path, { recursive: true });
}
for (const name of readdirSync(staging)) renameSync(join(staging, name), join(cli, name));
rmSync(staging, { recursive: true, force: true });
writeFileSync(join(cli, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
// Written after the bundle, so its mtime is the bundle's: a main.js newer
// than it is tsc's output again, not the bundle.
const dist = join(cli, "..");
const inputs = new Set();
for (const chunk of bundled.output)
  for (const id of chunk.type === "chunk" ? chunk.moduleIds : [])
    if (id.startsWith(dist)) inputs.add(relative(dist, id));
writeFileSync(
  join(cli, "bundle-inputs.json"),
  `${JSON.stringify({ inputs: [...inputs].sort() }, null, 1)}\n`,
);

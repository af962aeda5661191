#!/usr/bin/env node
// Packaging check (docs/testing.md), for the two packages this checkout
// publishes: `hearth` (npm pack of this package) and `hearth-store`, the
// library alone (scripts/store-package.mjs). For each: install the tarball
// into a fresh ESM project and a fresh CommonJS project, type-check a
// consumer file in each with `strict` and `skipLibCheck: false`, run it
// (open a store, write, search on a reader thread, read back), and list
// every engine warning the install printed. First, install each tarball
// alone into an empty project and print what that costs: "full install: …"
// for hearth, "library install: N packages, X MB" for hearth-store. Exits non-zero on any failure, on an
// engine warning not named in KNOWN_ENGINE_WARNINGS, or when the library
// install is over LIBRARY_CEILING. Takes a few minutes (six installs from
// the npm cache, four tsc runs).
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assembleStorePackage } from "./store-package.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Transitive packages whose `engines` claim more than Node 20 and that hearth cannot pin for its users. */
const KNOWN_ENGINE_WARNINGS = new Set(["cookie"]);
/**
 * The most `npm install hearth-store` may bring: packages (hearth-store
 * included) and bytes on disk. The floor, measured: better-sqlite3 12.x is
 * 38 packages (bindings, prebuild-install and its tree) and ~12 MB (10 MB
 * of it SQLite's source, shipped for builds from source, and the 2 MB
 * addon), fs-native-extensions 6 packages; see docs/testing.md.
 */
const LIBRARY_CEILING = { packages: 48, bytes: 18_000_000 };
const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"];
const ADDON = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
const work = mkdtempSync(join(tmpdir(), "hearth-pack-"));
const failures = [];

function sh(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** `npm pack` of the package in `dir` into `dest`: the tarball's path. */
function pack(dir, dest) {
  mkdirSync(dest, { recursive: true });
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dest], { cwd: dir });
  return join(
    dest,
    readdirSync(dest).find((f) => f.endsWith(".tgz")),
  );
}

/** A project directory with a package.json and nothing else. */
function project(dir, fields) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, ...fields }));
}

/**
 * --ignore-scripts skipped better-sqlite3's install script: put this
 * checkout's addon where a prebuilt one lands (build/Release/), as a
 * machine with no toolchain or network for a rebuild must.
 */
function copyAddon(dir) {
  mkdirSync(join(dir, ADDON, ".."), { recursive: true });
  cpSync(join(ROOT, ADDON), join(dir, ADDON));
}

/** What installing `tarball` alone into an empty project brings: packages and bytes on disk. */
function measureInstall(tarball, dir) {
  project(dir, { name: "size-probe" });
  const install = sh("npm", ["install", tarball, ...NPM_FLAGS], dir);
  if (install.status !== 0) throw new Error(`npm install ${tarball} failed\n${install.out}`);
  copyAddon(dir);
  const lock = JSON.parse(readFileSync(join(dir, "node_modules/.package-lock.json"), "utf8"));
  const names = Object.keys(lock.packages)
    .filter((k) => k !== "")
    .map((k) => k.replace(/^.*node_modules\//, ""));
  const bytes = Number(
    execFileSync("du", ["-sb", "node_modules"], { cwd: dir, encoding: "utf8" }).split("\t")[0],
  );
  return { names: names.sort(), bytes };
}

const consumer = (
  name,
) => `import { openStore, isHearthError, type Message, type Session } from "${name}";
export async function main(home: string): Promise<void> {
  await using store = await openStore({ home, env: {}, readerThreads: 1 });
  const session: Session = await store.sessions.getOrCreate("pack-check", { ownerId: "me" });
  const m: Message = await store.messages.append(session.id, { role: "user", content: "hi" });
  const hits = await store.search("hi");
  const popped = await store.messages.pop(session.id, { expectLastOrdinal: m.ordinal });
  if (popped?.id !== m.id || hits.length < 1 || isHearthError(new Error("plain")))
    throw new Error("bad answer");
  console.log(JSON.stringify({ ok: true, ordinal: m.ordinal }));
}
`;

/** Install `tarball` into a fresh ESM and CommonJS project each; type-check and run the consumer. */
function checkConsumers(name, tarball) {
  for (const kind of ["esm", "cjs"]) {
    const label = `${name} ${kind}`;
    const dir = join(work, name, kind);
    project(dir, { name: `${kind}-consumer`, ...(kind === "esm" ? { type: "module" } : {}) });
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          lib: ["es2022", "esnext.disposable"],
          types: ["node"],
          outDir: "out",
        },
        files: ["consumer.ts"],
      }),
    );
    writeFileSync(join(dir, "consumer.ts"), consumer(name));
    const install = sh(
      "npm",
      ["install", tarball, "typescript@5.9.3", "@types/node@20.19.25", ...NPM_FLAGS],
      dir,
    );
    if (install.status !== 0) failures.push(`${label}: npm install failed\n${install.out}`);
    for (const m of install.out.matchAll(/package: '(@?[^@']+)@([^']+)'/g)) {
      const line = `${label}: engine warning for ${m[1]}@${m[2]}`;
      if (KNOWN_ENGINE_WARNINGS.has(m[1])) console.log(`${line} (known, see docs/testing.md)`);
      else failures.push(line);
    }
    copyAddon(dir);
    const tsc = sh("npx", ["tsc", "-p", "."], dir);
    if (tsc.status !== 0) {
      failures.push(`${label}: tsc (strict, skipLibCheck: false) failed\n${tsc.out}`);
      continue;
    }
    const entry =
      kind === "esm"
        ? "import { main } from './out/consumer.js';"
        : "const { main } = require('./out/consumer.js');";
    const file = join(dir, kind === "esm" ? "run.mjs" : "run.cjs");
    writeFileSync(
      file,
      `${entry}\nmain(${JSON.stringify(join(dir, "home"))}).catch((e) => { console.error(e); process.exit(1); });\n`,
    );
    for (const round of [1, 2]) {
      const run = sh(process.execPath, [file], dir);
      if (run.status !== 0) failures.push(`${label}: run ${round} failed\n${run.out}`);
      else console.log(`${label}: run ${round}: ${run.out.trim()}`);
    }
  }
}

try {
  const full = pack(ROOT, join(work, "tarballs", "hearth"));
  const fullSize = measureInstall(full, join(work, "full-size"));
  console.log(
    `full install: ${fullSize.names.length} packages, ${(fullSize.bytes / 1e6).toFixed(1)} MB (npm install hearth: the CLI and every process)`,
  );
  checkConsumers("hearth", full);

  const { manifest } = await assembleStorePackage(join(work, "hearth-store-package"));
  const library = pack(join(work, "hearth-store-package"), join(work, "tarballs", "hearth-store"));
  const size = measureInstall(library, join(work, "library-size"));
  const mb = (size.bytes / 1e6).toFixed(1);
  console.log(
    `library install: ${size.names.length} packages, ${mb} MB (npm install ${manifest.name}; dependencies ${Object.keys(manifest.dependencies).join(", ")})`,
  );
  console.log(`  ${size.names.join(" ")}`);
  if (size.names.length > LIBRARY_CEILING.packages || size.bytes > LIBRARY_CEILING.bytes) {
    failures.push(
      `library install over its ceiling (${LIBRARY_CEILING.packages} packages, ${LIBRARY_CEILING.bytes / 1e6} MB): ${size.names.length} packages, ${mb} MB`,
    );
  }
  checkConsumers(manifest.name, library);
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(failures.join("\n\n"));
  process.exit(1);
}
console.log(
  "pack-check: ok (hearth and hearth-store: ESM and CommonJS consumers install, type-check strictly and run)",
);

#!/usr/bin/env node
// Packaging check (docs/testing.md): `npm pack` this package, install the
// tarball into a fresh ESM project and a fresh CommonJS project, type-check
// a consumer file in each with `strict` and `skipLibCheck: false`, run it
// (open a store, write, read back), and list every engine warning the
// install printed. Exits non-zero on any failure or on an engine warning
// not named in KNOWN_ENGINE_WARNINGS. Takes about a minute (two installs
// from the npm cache, two tsc runs).
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Transitive packages whose `engines` claim more than Node 20 and that hearth cannot pin for its users. */
const KNOWN_ENGINE_WARNINGS = new Set(["cookie"]);
const work = mkdtempSync(join(tmpdir(), "hearth-pack-"));
const failures = [];

function sh(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

try {
  execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: ROOT });
  const tarball = join(
    work,
    readdirSync(work).find((f) => f.endsWith(".tgz")),
  );
  const consumer = `import { openStore, isHearthError, type Message, type Session } from "hearth";
export async function main(home: string): Promise<void> {
  await using store = await openStore({ home, env: {} });
  const session: Session = await store.sessions.getOrCreate("pack-check", { ownerId: "me" });
  const m: Message = await store.messages.append(session.id, { role: "user", content: "hi" });
  const popped = await store.messages.pop(session.id, { expectLastOrdinal: m.ordinal });
  if (popped?.id !== m.id || isHearthError(new Error("plain"))) throw new Error("bad answer");
  console.log(JSON.stringify({ ok: true, ordinal: m.ordinal }));
}
`;
  for (const kind of ["esm", "cjs"]) {
    const dir = join(work, kind);
    execFileSync("mkdir", ["-p", dir]);
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name: `${kind}-consumer`,
        private: true,
        ...(kind === "esm" ? { type: "module" } : {}),
      }),
    );
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
    writeFileSync(join(dir, "consumer.ts"), consumer);
    const install = sh(
      "npm",
      [
        "install",
        tarball,
        "typescript@5.9.3",
        "@types/node@20.19.25",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
      ],
      dir,
    );
    if (install.status !== 0) failures.push(`${kind}: npm install failed\n${install.out}`);
    for (const m of install.out.matchAll(/package: '(@?[^@']+)@([^']+)'/g)) {
      const line = `${kind}: engine warning for ${m[1]}@${m[2]}`;
      if (KNOWN_ENGINE_WARNINGS.has(m[1])) console.log(`${line} (known, see docs/testing.md)`);
      else failures.push(line);
    }
    // --ignore-scripts skipped better-sqlite3's native build: use this checkout's.
    cpSync(
      join(ROOT, "node_modules/better-sqlite3/build"),
      join(dir, "node_modules/better-sqlite3/build"),
      { recursive: true },
    );
    const tsc = sh("npx", ["tsc", "-p", "."], dir);
    if (tsc.status !== 0)
      failures.push(`${kind}: tsc (strict, skipLibCheck: false) failed\n${tsc.out}`);
    else {
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
        if (run.status !== 0) failures.push(`${kind}: run ${round} failed\n${run.out}`);
        else console.log(`${kind}: run ${round}: ${run.out.trim()}`);
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(failures.join("\n\n"));
  process.exit(1);
}
console.log("pack-check: ok (ESM and CommonJS consumers install, type-check strictly and run)");

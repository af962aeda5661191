import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { runRecordingPackages } from "../../helpers/loaded.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

interface Manifest {
  name: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

/**
 * scripts/store-package.mjs run into a consumer project's
 * node_modules/hearth-store, with only the manifest's dependencies
 * resolvable there (links to this checkout's copies): a module the package
 * lacks, or a package it loads without declaring it, fails to load.
 */
function assembled(): { dir: string; pkg: string; manifest: Manifest } {
  const dir = dirname(tempHome());
  const pkg = join(dir, "node_modules", "hearth-store");
  execFileSync(process.execPath, [join(ROOT, "scripts", "store-package.mjs"), pkg], { cwd: ROOT });
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as Manifest;
  for (const name of Object.keys(manifest.dependencies))
    symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  return { dir, pkg, manifest };
}

describe("hearth-store, the library alone (scripts/store-package.mjs)", () => {
  // Assembling runs two TypeScript programs (the configuration's types): ~8 s of CPU.
  let built: ReturnType<typeof assembled>;
  beforeAll(() => {
    built = assembled();
  }, 240_000);

  it("depends on better-sqlite3 and fs-native-extensions only, pg and the SDKs optional peers, and ships no process", () => {
    const { pkg, manifest } = built;
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      "better-sqlite3",
      "fs-native-extensions",
    ]);
    for (const peer of [
      "pg",
      "@langchain/core",
      "@langchain/langgraph-checkpoint",
      "@openai/agents",
    ])
      expect(manifest.peerDependenciesMeta[peer]?.optional).toBe(true);
    const files = filesUnder(join(pkg, "dist"));
    expect(files).toContain("index.js");
    expect(files).toContain("store/sqlite/reader-pool/thread.js");
    expect(files).toContain("store/pg/open.js");
    for (const process of ["cli", "gateway", "dashboard", "scheduler", "acp", "supervisor", "web"])
      expect(files.filter((f) => f.startsWith(`${process}/`))).toEqual([]);
    for (const file of files.filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
      const code = readFileSync(join(pkg, "dist", file), "utf8");
      expect(code, file).not.toMatch(/(from |import\()\s*"(zod|croner)["/]/);
    }
  });

  it("opens a store from ESM and CommonJS, reads on a reader thread, checks a cron schedule, and loads no other package", async () => {
    const { dir } = built;
    const home = tempHome();
    const script = (load: string) => `
      ${load}
      (async () => {
        const refused = await openStore({
          home: ${JSON.stringify(home)}, env: {},
          config: { scheduler: { jobs: [{ name: "b", schedule: "61 * * * *", kind: "backup" }] } },
        }).then(() => "opened", (err) => (isHearthError(err) ? err.code : String(err)));
        // pg is an optional peer, not installed here: a PostgreSQL store is a coded refusal.
        const noDriver = await openStore({
          home: ${JSON.stringify(home)}, env: {}, url: "postgres://u@127.0.0.1:1/db",
        }).then(() => "opened", (err) => (isHearthError(err) ? err.code : String(err)));
        const store = await openStore({ home: ${JSON.stringify(home)}, env: {}, readerThreads: 1 });
        const s = await store.sessions.getOrCreate("same", { source: "pack" });
        const m = await store.messages.append(s.id, { role: "user", content: "hello library" });
        const hits = await store.search("library");
        await store.close();
        process.stdout.write(JSON.stringify({ ordinal: m.ordinal, hits: hits.length, refused, noDriver }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    writeFileSync(
      join(dir, "main.cjs"),
      script('const { openStore, isHearthError } = require("hearth-store");'),
    );
    writeFileSync(
      join(dir, "main.mjs"),
      script('import { openStore, isHearthError } from "hearth-store";'),
    );
    const esm = await runRecordingPackages([join(dir, "main.mjs")]);
    expect(esm.code, esm.stderr).toBe(0);
    expect(JSON.parse(esm.stdout)).toEqual({
      ordinal: 0,
      hits: 1,
      refused: "HEARTH_CONFIG_INVALID",
      noDriver: "HEARTH_PG_DRIVER_MISSING",
    });
    const cjs = await runRecordingPackages([join(dir, "main.cjs")]);
    expect(cjs.code, cjs.stderr).toBe(0);
    expect(JSON.parse(cjs.stdout)).toMatchObject({ ordinal: 1, refused: "HEARTH_CONFIG_INVALID" });
    for (const loaded of [esm.packages, cjs.packages]) {
      expect(loaded).toContain("hearth-store");
      expect(loaded).toContain("better-sqlite3");
      expect(loaded.filter((p) => ["zod", "croner", "pg", "fastify"].includes(p))).toEqual([]);
    }
  }, 120_000);
});

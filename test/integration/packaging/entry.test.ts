import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { runRecordingPackages } from "../../helpers/loaded.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** A consumer project whose node_modules/hearth is this package (resolved through its exports map). */
function consumer(): string {
  const dir = dirname(tempHome());
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "hearth"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  return dir;
}

/** The packages that loading `entry` (run as the main module) loads. */
async function loadedBy(entry: string): Promise<string[]> {
  const result = await runRecordingPackages([entry]);
  if (result.code !== 0) throw new Error(`node ${entry} exited ${result.code}: ${result.stderr}`);
  return result.packages;
}

describe("the library entry", () => {
  it("loads no server, metrics or CLI packages (what docs/api.md says the import loads)", async () => {
    const packages = await loadedBy(join(ROOT, "dist", "index.js"));
    for (const heavy of [
      "fastify",
      "@fastify/cookie",
      "prom-client",
      "commander",
      "cli-progress",
      "eventsource-parser",
    ]) {
      expect(packages).not.toContain(heavy);
    }
    expect(packages).toContain("better-sqlite3");
    // The gateway does load them: the check sees what it claims to see.
    expect(await loadedBy(join(ROOT, "dist", "gateway", "server.js"))).toEqual(
      expect.arrayContaining(["fastify", "avvio"]),
    );
  });

  it('require("hearth") works from CommonJS, and import from ESM, and both write a store', () => {
    const dir = consumer();
    const home = tempHome();
    const script = (load: string) => `
      ${load}
      (async () => {
        const store = await openStore({ home: ${JSON.stringify(home)}, env: {} });
        const s = await store.sessions.getOrCreate("same", { source: "pack" });
        const m = await store.messages.append(s.id, { role: "user", content: "hi", clientId: process.argv[1] });
        await store.close();
        process.stdout.write(JSON.stringify({ ordinal: m.ordinal, isError: typeof isHearthError }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    writeFileSync(
      join(dir, "main.cjs"),
      script('const { openStore, isHearthError } = require("hearth");'),
    );
    writeFileSync(
      join(dir, "main.mjs"),
      script('import { openStore, isHearthError } from "hearth";'),
    );
    const run = (file: string, id: string) =>
      JSON.parse(
        execFileSync(process.execPath, [join(dir, file), id], { cwd: dir, encoding: "utf8" }),
      ) as { ordinal: number; isError: string };
    expect(run("main.cjs", "cjs")).toEqual({ ordinal: 0, isError: "function" });
    expect(run("main.mjs", "esm")).toEqual({ ordinal: 1, isError: "function" });
  });
});

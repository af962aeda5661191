import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { builtFile } from "../../src/files/built.js";

// Code that spawns the CLI, starts a worker thread or serves the web assets
// finds them through builtFile, which must work from tsc's output, from the
// CLI's bundle (scripts/bundle-cli.mjs) and from the sources under the test
// runner. Here: the sources; every CLI test runs the bundle.
describe("builtFile", () => {
  it("finds every built file hearth loads by path", () => {
    for (const file of [
      "cli/main.js",
      "store/sqlite/reader-pool/thread.js",
      "store/sqlite/backup-worker.js",
      "store/sqlite/wal-ship/ship-thread.js",
      "web/index.html",
      "../package.json",
    ])
      expect(existsSync(builtFile(file)), file).toBe(true);
  });

  // npm test builds with npm run build, bundle included (tsc alone leaves a
  // main.js that does not run under dist/cli/package.json).
  it("is the CLI's CommonJS bundle, its chunks one folder below dist/", () => {
    const main = readFileSync(builtFile("cli/main.js"), "utf8");
    const chunks = [...main.matchAll(/require\("\.\/(hearth-[^"]+\.js)"\)/g)].map((m) => m[1]);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(existsSync(builtFile(`cli/${chunk}`)), chunk).toBe(true);
    expect(main).not.toMatch(/require\("\.\/commands\//);
    expect(main).not.toMatch(/^import /m);
    expect(JSON.parse(readFileSync(builtFile("cli/package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });
  });
});

import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { staleSources } from "../helpers/dist-staleness.js";

// The test setup's rebuild check (test/helpers/dist-staleness.ts), on a
// checkout laid out as `npm run build` leaves it: src/cli/ bundled into
// dist/cli/main.js (no per-file output), everything else file for file.

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Writes each file with the given mtime (seconds). */
function files(at: number, ...paths: string[]): void {
  for (const path of paths) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, path.endsWith(".json") ? '{"inputs":["cli/main.js","store/open.js"]}' : "");
    utimesSync(full, at, at);
  }
}

/** A freshly built checkout: sources at t=100, tsc output at 200, the bundle at 300. */
function built(): void {
  if (root) rmSync(root, { recursive: true, force: true });
  root = mkdtempSync(join(tmpdir(), "hearth-staleness-"));
  files(100, "tsconfig.json", "tsconfig.build.json", "scripts/bundle-cli.mjs");
  files(100, "src/store/open.ts", "src/cli/main.ts", "src/cli/commands/ps.ts", "src/types/x.d.ts");
  files(200, "dist/store/open.js");
  files(300, "dist/cli/main.js", "dist/cli/hearth-ps-abc.js", "dist/cli/bundle-inputs.json");
}

describe("staleSources", () => {
  it("finds nothing after a build, though src/cli/ has no output file of its own", () => {
    built();
    expect(staleSources(root)).toEqual([]);
  });

  it("finds a changed source of the bundle", () => {
    built();
    files(400, "src/cli/commands/ps.ts");
    expect(staleSources(root)).toEqual(["src/cli/commands/ps.ts"]);
  });

  it("finds a changed source outside src/cli/", () => {
    built();
    files(400, "src/store/open.ts");
    expect(staleSources(root)).toEqual(["src/store/open.ts"]);
  });

  it("finds a new source without output", () => {
    built();
    files(50, "src/store/new.ts");
    expect(staleSources(root)).toEqual(["src/store/new.ts"]);
  });

  it("finds a bundled module rebuilt after the bundle (tsc alone)", () => {
    built();
    files(400, "dist/store/open.js");
    expect(staleSources(root)).toEqual(["src/store/open.ts"]);
  });

  it("takes a main.js newer than the bundle's stamp for tsc's, not the bundle", () => {
    built();
    files(400, "dist/cli/main.js");
    expect(staleSources(root)).toEqual(
      expect.arrayContaining(["src/cli/main.ts", "src/cli/commands/ps.ts"]),
    );
  });

  it("finds src/cli/ stale without the bundle's stamp, or with the bundler changed", () => {
    built();
    rmSync(join(root, "dist/cli/bundle-inputs.json"));
    expect(staleSources(root).sort()).toEqual(["src/cli/commands/ps.ts", "src/cli/main.ts"]);
    built();
    files(400, "scripts/bundle-cli.mjs");
    expect(staleSources(root).sort()).toEqual(["src/cli/commands/ps.ts", "src/cli/main.ts"]);
  });

  it("finds everything stale when a tsconfig changed", () => {
    built();
    files(400, "tsconfig.build.json");
    expect(staleSources(root).sort()).toEqual([
      "src/cli/commands/ps.ts",
      "src/cli/main.ts",
      "src/store/open.ts",
    ]);
  });
});

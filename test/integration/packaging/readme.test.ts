import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** The README's library example, and what its `console.log(...); // expected` comments claim. */
function readmeExample(): { code: string; claims: string[] } {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const match = /## The library\n\n```ts\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error("README.md has no ```ts block under ## The library");
  const source = match[1]!;
  const claims = [...source.matchAll(/^console\.log\(.*\); \/\/ (.*)$/gm)].map((m) => m[1]!);
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const dist = pathToFileURL(join(ROOT, "dist", "index.js")).href;
  return { code: js.replace(/from "hearth"/g, `from ${JSON.stringify(dist)}`), claims };
}

describe("README", () => {
  it("the library example runs twice in a row and prints what its comments claim", () => {
    const { code, claims } = readmeExample();
    expect(claims.length).toBeGreaterThanOrEqual(3);
    const home = tempHome();
    const file = join(dirname(home), "example.mjs");
    writeFileSync(file, code);
    for (const run of [1, 2]) {
      const out = execFileSync(process.execPath, [file], {
        env: { PATH: process.env.PATH, HEARTH_HOME: home },
        encoding: "utf8",
      });
      expect({ run, lines: out.trim().split("\n") }).toEqual({ run, lines: claims });
    }
  });
});

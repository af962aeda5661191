// The arrows docs/architecture.md says never exist, checked on the sources:
// every static and dynamic import of every file under src/. A new import
// that crosses a layer fails here, naming the file and what it imported.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

interface Import {
  /** The importing file, relative to src/. */
  file: string;
  /** A package name, or the imported file relative to src/. */
  target: string;
  typeOnly: boolean;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

function importsOf(path: string): Import[] {
  const text = readFileSync(path, "utf8");
  const file = relative(SRC, path);
  const found: Import[] = [];
  const patterns = [
    /^\s*(import|export)(\s+type)?\s[^;]*?from\s+"([^"]+)"/gms,
    /\bimport\(\s*"([^"]+)"\s*\)/g,
  ];
  for (const m of text.matchAll(patterns[0]!))
    found.push({ file, target: resolveSpec(file, m[3]!), typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(patterns[1]!))
    found.push({ file, target: resolveSpec(file, m[1]!), typeOnly: false });
  return found;
}

function resolveSpec(file: string, spec: string): string {
  if (!spec.startsWith("."))
    return spec.startsWith("node:")
      ? spec
      : spec.split("/")[0]!.startsWith("@")
        ? spec.split("/").slice(0, 2).join("/")
        : spec.split("/")[0]!;
  return relative(SRC, resolve(SRC, dirname(file), spec)).replace(/\.js$/, ".ts");
}

const all = sources(SRC).flatMap(importsOf);
const under = (path: string, ...dirs: string[]) => dirs.some((d) => path.startsWith(`${d}/`));
const PROCESS_DIRS = ["gateway", "dashboard", "scheduler", "worker", "supervisor", "acp"];
const show = (list: Import[]) => list.map((i) => `${i.file} -> ${i.target}`);

describe("layering (docs/architecture.md)", () => {
  it("reads the imports it checks", () => {
    // A parser that found nothing would pass every rule below.
    expect(all.length).toBeGreaterThan(500);
    expect(all).toContainEqual({
      file: "store/open.ts",
      target: "store/sqlite/open.ts",
      typeOnly: false,
    });
    expect(all).toContainEqual({ file: "store/pg/pool.ts", target: "pg", typeOnly: false });
  });

  it("better-sqlite3 is imported only by the SQLite backend", () => {
    const bad = all.filter(
      (i) => i.target === "better-sqlite3" && !under(i.file, "store/sqlite", "store/copy"),
    );
    expect(show(bad)).toEqual([]);
  });

  it("pg is imported only by the PostgreSQL backend and its maintenance", () => {
    const bad = all.filter(
      (i) => i.target === "pg" && !under(i.file, "store/pg", "ops/pg", "store/copy"),
    );
    expect(show(bad)).toEqual([]);
  });

  it("the neutral store (src/store/*.ts) names no backend, but where openStore() picks one", () => {
    const neutral = all.filter((i) => dirname(i.file) === "store");
    const bad = neutral.filter(
      (i) =>
        under(i.target, "store/sqlite", "store/pg") &&
        !(i.file === "store/open.ts") &&
        // isSqliteStore() narrows to the SQLite store's type; it loads nothing.
        !(i.file === "store/api.ts" && i.typeOnly && i.target === "store/sqlite/store.ts"),
    );
    expect(show(bad)).toEqual([]);
  });

  it("the backends do not import each other", () => {
    const bad = all.filter(
      (i) =>
        (under(i.file, "store/sqlite") && under(i.target, "store/pg")) ||
        (under(i.file, "store/pg") && under(i.target, "store/sqlite")),
    );
    expect(show(bad)).toEqual([]);
  });

  it("process/ knows no store, store/ nothing above it, ops/ no CLI", () => {
    const above = ["ops", "turn", "cli", "http", "adapters", ...PROCESS_DIRS];
    const bad = all.filter(
      (i) =>
        (under(i.file, "process") && under(i.target, "store")) ||
        (under(i.file, "store") && under(i.target, ...above)) ||
        (under(i.file, "ops") && under(i.target, "cli")),
    );
    expect(show(bad)).toEqual([]);
  });

  it("no process folder imports another", () => {
    const bad = all.filter((i) => {
      const from = PROCESS_DIRS.find((d) => under(i.file, d));
      const to = PROCESS_DIRS.find((d) => under(i.target, d));
      return from !== undefined && to !== undefined && from !== to;
    });
    expect(show(bad)).toEqual([]);
  });
});

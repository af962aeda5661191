// Prepared statements that SQLite would plan again on every call. Two
// cases, both measured first (bench workload 11, docs/benchmarks-history.md):
// - a bare `LIMIT ?`: SQLite 3.53 compiles the bound limit into the
//   program, so every new binding expires the statement and the next step
//   prepares it again (getItems(20) went from 0.885x to 1.3x MemorySession
//   once the store wrote `LIMIT +?`); a bare LIKE pattern likewise
//   (isLikeOrGlob marks it), so the source scan below covers both;
// - sqlite_stat4 samples: with them, `column = ?` on an indexed column is
//   planned for the value bound, with the same cost (a 5-row tail read took
//   2-3x as long after ANALYZE). optimize() keeps stat1 and drops stat4.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { optimize } from "../../../src/ops/optimize.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { runCli } from "../../helpers/cli.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

async function seededStore() {
  const home = tempHome();
  const store = await openSqliteStore({ home });
  const s = await store.sessions.create({ title: "replan" });
  await store.messages.appendBatch(
    s.id,
    Array.from({ length: 300 }, (_, i) => ({ role: "user" as const, content: `m${i}` })),
  );
  return { home, store, sessionId: s.id };
}

function sourceFiles(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path, ext) : path.endsWith(ext) ? [path] : [];
  });
}

describe("statements SQLite would prepare again on every call", () => {
  it("LIMIT +? returns what LIMIT ? returns, for every kind of limit", async () => {
    const { store, sessionId } = await seededStore();
    const db = new Database(store.path, { readonly: true });
    try {
      const tail = (limit: string) =>
        db
          .prepare(
            `SELECT content FROM messages WHERE session_id = ? AND active = 1
             ORDER BY ordinal DESC LIMIT ${limit}`,
          )
          .pluck();
      for (const n of [7, 1, 0, -1, 300, 301]) {
        const plus = tail("+?").all(sessionId, n) as string[];
        expect(plus).toEqual(tail("?").all(sessionId, n));
        expect(plus).toHaveLength(n < 0 ? 300 : Math.min(n, 300));
      }
      expect(() => tail("+?").all(sessionId, "seven")).toThrow(/datatype mismatch/);
      expect(() => tail("?").all(sessionId, "seven")).toThrow(/datatype mismatch/);
    } finally {
      db.close();
      await store.close();
    }
  });

  it("no SQLite statement in src (or in the bench's raw ceilings) binds its LIMIT, OFFSET or LIKE pattern bare", () => {
    const root = join(__dirname, "../../..");
    const offenders = [
      ...sourceFiles(join(root, "src"), ".ts"),
      // A ceiling runs hearth's SQL; with a bare limit it would re-prepare where hearth does not.
      ...sourceFiles(join(root, "bench/lib"), ".mjs"),
      ...sourceFiles(join(root, "bench/workloads"), ".mjs"),
    ]
      .filter((path) => !path.includes("/pg/"))
      .flatMap((path) =>
        readFileSync(path, "utf8")
          .split("\n")
          .map((line, i) => ({ where: `${path}:${i + 1}`, line }))
          .filter(({ line }) => /\b(LIMIT|OFFSET|LIKE|GLOB)\s+\?/.test(line)),
      );
    expect(offenders).toEqual([]);
  });

  it("optimize() keeps the planner's stat1 and leaves no stat4 samples, read from an old and a new connection", async () => {
    const { store } = await seededStore();
    // One connection has read the schema (and would hold loaded samples) before optimize; one opens after.
    const before = new Database(store.path, { readonly: true });
    before.prepare("SELECT count(*) FROM messages").get();
    try {
      const result = await optimize(store);
      expect(result.steps.find((s) => s.step === "analyze")?.done).toBe(true);
      const after = new Database(store.path, { readonly: true });
      for (const db of [before, after]) {
        expect(db.prepare("SELECT count(*) FROM sqlite_stat1").pluck().get()).toBeGreaterThan(0);
        expect(db.prepare("SELECT count(*) FROM sqlite_stat4").pluck().get()).toBe(0);
      }
      after.close();
    } finally {
      before.close();
      await store.close();
    }
  });

  it("the structural analyze leaves the writer planning from stat1 alone: the samples its own ANALYZE loaded are dropped", async () => {
    const { store } = await seededStore();
    // A table whose best plan the samples change: stat4 knows a = 1 holds
    // 9,990 of 10,000 rows (scan), stat1 only that a value averages ~900
    // (the index on a beats the one on b, whose two values average 5,000).
    const raw = new Database(store.path);
    raw.exec("CREATE TABLE skew (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)");
    raw.exec("CREATE INDEX skew_a ON skew (a); CREATE INDEX skew_b ON skew (b)");
    const insert = raw.prepare("INSERT INTO skew (a, b) VALUES (?, ?)");
    raw.transaction(() => {
      for (let i = 0; i < 10_000; i++) insert.run(i < 9_990 ? 1 : i, i % 2);
    })();
    raw.close();
    const writer = store[internals].connection("writer").db;
    const plan = () =>
      writer
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM skew WHERE a = ? AND b = ?")
        .all(1, 0)
        .map((r) => (r as { detail: string }).detail)
        .join("; ");
    try {
      // Alone, as optimize()'s VACUUM right after it would reload the schema anyway.
      await store.withStructuralGate("analyze", (ctx) => ctx.analyze());
      // With the samples ANALYZE loaded still in memory: "SCAN skew".
      expect(plan()).toContain("USING INDEX skew_a");
    } finally {
      await store.close();
    }
  });

  it("doctor warns of samples an outside ANALYZE left; hearth sessions optimize drops them", async () => {
    const { home, store } = await seededStore();
    await store.close();
    const raw = new Database(join(home, "state.db"));
    raw.exec("ANALYZE");
    const samples = raw.prepare("SELECT count(*) FROM sqlite_stat4").pluck().get() as number;
    raw.close();
    expect(samples).toBeGreaterThan(0);
    const finding = async () =>
      (
        JSON.parse((await runCli(["--json", "doctor"], { home })).stdout).findings as {
          code: string;
          severity: string;
          message: string;
        }[]
      ).find((f) => f.code === "planner_samples");
    expect(await finding()).toMatchObject({
      severity: "warning",
      message: expect.stringContaining(`${samples} planner sample(s)`),
    });
    expect((await runCli(["--json", "sessions", "optimize"], { home })).code).toBe(0);
    expect(await finding()).toMatchObject({ severity: "ok" });
  });
});

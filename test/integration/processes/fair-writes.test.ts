import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

interface Timed {
  commits: number;
  maxLateMs: number;
}
interface Measured {
  maxLateMs: number;
  waitedMs: number;
  error?: { code?: string; message: string };
}

/** A plain (non-hearth) fixture process speaking JSON lines on stdout. */
function spawnFixture(name: string, args: string[]) {
  return spawnNode([fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url)), ...args]);
}

function summary(label: string, results: Timed[]) {
  const commits = results.map((r) => r.commits);
  const ratio = Math.min(...commits) / Math.max(...commits);
  const late = results.map((r) => Math.round(r.maxLateMs));
  console.log(
    `${label}: commits per process ${commits.join(" / ")} (min/max ${ratio.toFixed(2)}), max lateness ms ${late.join(" / ")}`,
  );
  return ratio;
}

/** Four hearth writer processes appending for `ms`, released together once all are open. */
async function hearthRun(synchronous: "normal" | "full", ms: number) {
  const home = tempHome();
  await (await openStore({ home })).close();
  const workers = await Promise.all([0, 1, 2, 3].map(() => startWorker()));
  const config = { durability: { synchronous } };
  await Promise.all(workers.map((w) => w.call("open", { home, config })));
  // yieldingAppends, not timedAppends: the latter reports 0 ms lateness when a
  // wait blocks the loop (its interval never gets to run), so it cannot fail.
  const results = await Promise.all(workers.map((w) => w.call<Timed>("yieldingAppends", { ms })));
  await Promise.all(workers.map((w) => w.call("close")));
  const check = await openStore({ home });
  const stored = (await check.counts()).messages;
  await check.close();
  return { results, stored };
}

describe("four writer processes share the write lock fairly (hearth)", () => {
  for (const [synchronous, ms] of [
    ["normal", 3000],
    ["full", 2000],
  ] as const) {
    it(`synchronous=${synchronous}: nobody starves and no event loop freezes`, async () => {
      const { results, stored } = await hearthRun(synchronous, ms);
      const ratio = summary(`hearth, synchronous=${synchronous}, ${ms} ms`, results);
      // Every acknowledged commit is in the store.
      expect(stored).toBe(results.reduce((n, r) => n + r.commits, 0));
      for (const r of results) expect(r.commits).toBeGreaterThan(0);
      expect(ratio).toBeGreaterThanOrEqual(0.5);
      for (const r of results) expect(r.maxLateMs).toBeLessThan(50);
    });
  }

  it("baseline for the record: raw better-sqlite3 writers (printed, not asserted)", async () => {
    const home = tempHome();
    const setup = await openStore({ home, config: { durability: { synchronous: "normal" } } });
    const sessions = await Promise.all(
      [0, 1, 2, 3].map((i) => setup.sessions.create({ title: `raw ${i}` })),
    );
    const path = setup.path;
    await setup.close();
    const writers = sessions.map((s) => spawnFixture("raw-writer.mjs", [path, s.id, "normal"]));
    await Promise.all(writers.map((w) => w.json((l) => l.ready === true)));
    for (const w of writers) w.send({ ms: 3000 });
    const results = (await Promise.all(
      writers.map((w) => w.json((l) => typeof l.commits === "number")),
    )) as unknown as (Timed & { busyErrors: number })[];
    summary("raw better-sqlite3, synchronous=normal, 3000 ms", results);
    console.log(`raw better-sqlite3: SQLITE_BUSY errors ${results.map((r) => r.busyErrors)}`);
    const db = new Database(path, { readonly: true });
    const { n } = db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number };
    db.close();
    expect(n).toBe(results.reduce((sum, r) => sum + r.commits, 0));
  });
});

describe("waiting for a foreign writer (not hearth)", () => {
  async function storeWithSession(config: Record<string, unknown> = {}) {
    const home = tempHome();
    const setup = await openStore({ home });
    const session = await setup.sessions.create({ title: "waits" });
    const path = setup.path;
    await setup.close();
    const worker = await startWorker();
    await worker.call("open", { home, config });
    return { path, sessionId: session.id, worker };
  }

  function countRows(path: string, sessionId: string): number {
    const db = new Database(path, { readonly: true });
    try {
      return (
        db.prepare("SELECT count(*) AS n FROM messages WHERE session_id = ?").get(sessionId) as {
          n: number;
        }
      ).n;
    } finally {
      db.close();
    }
  }

  it("keeps the event loop running while it waits, then writes once the holder commits", async () => {
    const { path, sessionId, worker } = await storeWithSession();
    const holder = spawnFixture("raw-write-holder.mjs", [path, "1500"]);
    await holder.json((l) => l.locked === true);
    const r = await worker.call<Measured>("measuredAppend", { sessionId, clientId: "late" });
    console.log(
      `append behind a foreign holder: waited ${Math.round(r.waitedMs)} ms, max lateness ${Math.round(r.maxLateMs)} ms`,
    );
    expect(r.error).toBeUndefined();
    await holder.json((l) => l.released === true);
    expect(r.waitedMs).toBeGreaterThanOrEqual(1000);
    expect(r.maxLateMs).toBeLessThan(50);
    expect(countRows(path, sessionId)).toBe(1);
  });

  it("gives up after the patience with HEARTH_BUSY naming the holder, and writes nothing", async () => {
    const { path, sessionId, worker } = await storeWithSession({ store: { busyTimeoutMs: 500 } });
    const holder = spawnFixture("raw-write-holder.mjs", [path, "forever"]);
    await holder.json((l) => l.locked === true);
    const r = await worker.call<Measured>("measuredAppend", { sessionId, clientId: "never" });
    console.log(
      `append past the patience: gave up after ${Math.round(r.waitedMs)} ms: ${r.error?.message}`,
    );
    expect(r.error?.code).toBe("HEARTH_BUSY");
    expect(r.waitedMs).toBeGreaterThanOrEqual(400);
    expect(r.waitedMs).toBeLessThan(3000);
    expect(r.maxLateMs).toBeLessThan(50);
    expect(r.error?.message).toContain("healthy");
    holder.send("release");
    await holder.json((l) => l.released === true);
    expect(countRows(path, sessionId)).toBe(0);
    // The message names who held the store (the holder is gone now; its pid is in the text).
    expect(r.error?.message).toContain(`pid ${holder.pid}`);
  });
});

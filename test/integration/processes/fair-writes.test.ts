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

const worstLateness = (results: Timed[]) => Math.max(...results.map((r) => r.maxLateMs));
const total = (results: Timed[]) => results.reduce((n, r) => n + r.commits, 0);

/** Four hearth writer processes appending for `ms`, released together once all are open. */
async function hearthRun(synchronous: "normal" | "full", ms: number) {
  const home = tempHome();
  await (await openStore({ home })).close();
  const workers = await Promise.all([0, 1, 2, 3].map(() => startWorker()));
  const config = { durability: { synchronous } };
  await Promise.all(workers.map((w) => w.call("open", { home, config })));
  const results = await Promise.all(workers.map((w) => w.call<Timed>("yieldingAppends", { ms })));
  await Promise.all(workers.map((w) => w.call("close")));
  const check = await openStore({ home });
  const stored = (await check.counts()).messages;
  await check.close();
  return { results, stored };
}

/**
 * The baseline: four plain better-sqlite3 writers (SQLite's own busy handler,
 * which sleeps synchronously) on a hearth store, the same statements, the
 * same loop and the same lateness probe (test/fixtures/raw-writer.mjs).
 */
async function rawRun(synchronous: "normal" | "full", ms: number) {
  const home = tempHome();
  const setup = await openStore({ home, config: { durability: { synchronous } } });
  const sessions = await Promise.all(
    [0, 1, 2, 3].map((i) => setup.sessions.create({ title: `raw ${i}` })),
  );
  const path = setup.path;
  await setup.close();
  const writers = sessions.map((s) => spawnFixture("raw-writer.mjs", [path, s.id, synchronous]));
  await Promise.all(writers.map((w) => w.json((l) => l.ready === true)));
  for (const w of writers) w.send({ ms });
  const results = (await Promise.all(
    writers.map((w) => w.json((l) => typeof l.commits === "number")),
  )) as unknown as Timed[];
  const db = new Database(path, { readonly: true });
  const { n } = db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number };
  db.close();
  return { results, stored: n };
}

describe("four writer processes share the write lock fairly", () => {
  for (const synchronous of ["normal", "full"] as const) {
    it(`synchronous=${synchronous}: every writer commits, nobody starves, and no event loop stalls as raw SQLite's do`, async () => {
      const ms = 2000;
      // The baseline first, on this machine under its load of the moment.
      const raw = await rawRun(synchronous, ms);
      summary(`raw better-sqlite3, synchronous=${synchronous}, ${ms} ms`, raw.results);
      const hearth = await hearthRun(synchronous, ms);
      const ratio = summary(`hearth, synchronous=${synchronous}, ${ms} ms`, hearth.results);
      // Every acknowledged commit is in the store.
      expect(hearth.stored).toBe(total(hearth.results));
      expect(raw.stored).toBe(total(raw.results));
      // Nobody starves: a count, not a time.
      for (const r of hearth.results) expect(r.commits).toBeGreaterThan(0);
      expect(ratio).toBeGreaterThanOrEqual(0.5);
      // A writer waiting for the lock keeps its event loop running. Stalls are
      // compared with the raw writers' in the same run, not with a fixed number
      // of milliseconds: a loaded machine makes both later (measured: hearth
      // 0.02-0.05 of raw; the same loop behind SQLite's busy handler, as with
      // the write lock bypassed, is of the order of raw itself).
      expect(worstLateness(hearth.results)).toBeLessThan(worstLateness(raw.results) / 4);
    });
  }
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
    // Its event loop ran all along: a synchronous wait would stall it for the whole wait.
    expect(r.maxLateMs).toBeLessThan(r.waitedMs / 2);
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
    // The configured patience (500 ms) applied, not the default (5000 ms).
    expect(r.waitedMs).toBeGreaterThanOrEqual(400);
    expect(r.waitedMs).toBeLessThan(5000);
    expect(r.maxLateMs).toBeLessThan(r.waitedMs / 2);
    expect(r.error?.message).toContain("healthy");
    holder.send("release");
    await holder.json((l) => l.released === true);
    expect(countRows(path, sessionId)).toBe(0);
    // The message names who held the store (the holder is gone now; its pid is in the text).
    expect(r.error?.message).toContain(`pid ${holder.pid}`);
  });
});

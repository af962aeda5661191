/**
 * The readiness check the HTTP processes answer /v1/ready with (H3), on
 * real stores: a SQLite store is not ready while parked for a maintenance
 * window or when its disk has less room than the threshold, nor while the
 * process drains or after the store closed; the answer is shared for
 * cacheMs, so a balancer's polling costs one check; a PostgreSQL store
 * that answers its round trip is ready.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Readiness, readyAnswer } from "../../../src/http/readiness.js";
import { isSqliteStore, openStore, type Store } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function sqlite(): Promise<Store> {
  const store = await openStore({ home: tempHome(), env: {} });
  stores.push(store);
  return store;
}

const codes = async (r: Readiness) => (await r.check()).reasons.map((x) => x.code);

describe("readiness", () => {
  it("a SQLite store is ready, and not while parked, short of disk, draining or closed", async () => {
    const store = await sqlite();
    let draining = false;
    const fresh = (options: { minFreeBytes?: number } = {}) =>
      new Readiness({ stores: () => [store], draining: () => draining, cacheMs: 0, ...options });
    expect(await fresh().check()).toEqual({
      status: "ready",
      reasons: [],
      stores: [{ profile: "default", backend: "sqlite", reachable: true }],
    });
    // More free bytes asked for than any disk has: not ready, coded, no path in the message.
    const full = await fresh({ minFreeBytes: Number.MAX_SAFE_INTEGER }).check();
    expect(full.reasons).toEqual([
      expect.objectContaining({ code: "HEARTH_NO_SPACE", profile: "default" }),
    ]);
    expect(full.reasons[0]!.message).not.toContain(store.path);
    if (!isSqliteStore(store)) throw new Error("a SQLite store was expected");
    await store.park();
    expect(await codes(fresh())).toEqual(["HEARTH_MAINTENANCE_RUNNING"]);
    await store.resume();
    draining = true;
    expect(await codes(fresh())).toEqual(["HEARTH_DRAINING"]);
    draining = false;
    await store.close();
    expect(await codes(fresh())).toEqual(["HEARTH_STORE_CLOSED"]);
  });

  it("answers 503 with Retry-After and the reasons, profile names only when allowed", async () => {
    const store = await sqlite();
    const r = new Readiness({ stores: () => [store], minFreeBytes: Number.MAX_SAFE_INTEGER });
    const shown = await readyAnswer(r, true);
    expect(shown).toMatchObject({ status: 503, retryAfter: 1, body: { status: "not ready" } });
    expect(shown.body.reasons[0]).toMatchObject({ code: "HEARTH_NO_SPACE", profile: "default" });
    const hidden = await readyAnswer(r, false);
    expect(hidden.body.reasons[0]).not.toHaveProperty("profile");
  });

  it("shares one answer for cacheMs: polling costs one check", async () => {
    const store = await sqlite();
    let asked = 0;
    const r = new Readiness({
      stores: () => {
        asked++;
        return [store];
      },
      cacheMs: 60_000,
    });
    const first = r.check();
    for (let i = 0; i < 50; i++) expect(r.check()).toBe(first);
    await first;
    expect(asked).toBe(1);
  });

  it.skipIf(!pgEnabled)("a PostgreSQL store that answers its round trip is ready", async () => {
    const store = await openStore({ home: tempHome(), url: await freshPgDatabase(), env: {} });
    stores.push(store);
    const report = await new Readiness({ stores: () => [store] }).check();
    expect(report).toEqual({
      status: "ready",
      reasons: [],
      stores: [{ profile: "default", backend: "postgres", reachable: true }],
    });
  });

  it("latest() answers at once, never waiting on a store that hangs (liveness)", async () => {
    let answer: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const key = {};
    const r = new Readiness({
      targets: () => [{ profile: "default", backend: "postgres", key, roundTrip: () => hanging }],
      cacheMs: 0,
      timeoutMs: 60_000,
    });
    expect(r.latest()).toBeUndefined();
    expect(r.latest()).toBeUndefined();
    answer();
    await r.check();
    expect(r.latest()).toMatchObject({ status: "ready", reasons: [] });
  });
});

/**
 * Handoff wake-ups on PostgreSQL (LISTEN/NOTIFY): an idle gateway's watcher
 * polls slowly and is woken by the server when another process requests a
 * handoff; with its LISTEN connection gone it polls at the normal rate, so
 * no work waits on a lost notification, and it listens again once it can.
 * The watcher runs in this process on a real store; the handoffs are
 * requested by another process (test/fixtures/store-worker.mjs).
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { HANDOFF_FALLBACK_POLL_MS, HandoffWatcher } from "../../../src/gateway/handoff.js";
import { openStore, type Store } from "../../../src/index.js";
import type { ProfileRuntime } from "../../../src/turn/run.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, PG_ADMIN_URL, pgEnabled, withPgClient } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Setup {
  url: string;
  watcher: HandoffWatcher;
  worker: Worker;
  warnings: string[];
  /** A connection of the test's own, opened before any outage. */
  probe: pg.Client;
}

/** A store and its watcher here (gateway.handoffPollMs `pollMs`), a worker process on the same database. */
async function setup(pollMs: number): Promise<Setup> {
  const url = await freshPgDatabase();
  const store = await openStore({ home: tempHome(), url, env: {} });
  cleanup.push(() => store.close());
  const config = { ...store.config, gateway: { ...store.config.gateway, handoffPollMs: pollMs } };
  const runtime = { profile: "default", store } as ProfileRuntime;
  const warnings: string[] = [];
  const log = {
    info: () => undefined,
    warn: (e: Record<string, unknown>) => void warnings.push(String(e.event)),
  };
  const watcher = new HandoffWatcher(new Map([["default", runtime]]), () => config, log);
  await watcher.start();
  cleanup.push(() => watcher.stop(0));
  const worker = await startWorker();
  cleanup.push(() => worker.kill("SIGKILL"));
  await worker.call("open", { home: tempHome(), config: { store: { url } } });
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  cleanup.push(() => probe.end());
  return { url, watcher, worker, warnings, probe };
}

/** The connections listening for handoffs on `url`'s database: server pid, application_name. */
async function listening(url: string): Promise<{ pid: number; application_name: string }[]> {
  return withPgClient(PG_ADMIN_URL, async (c) => {
    const { rows } = await c.query(
      "SELECT pid, application_name FROM pg_stat_activity WHERE datname = $1 AND query LIKE $2",
      [new URL(url).pathname.slice(1), 'LISTEN "hearth\\_handoff:%'],
    );
    return rows;
  });
}

const listeners = async (url: string) => (await listening(url)).map((l) => l.pid);

/** The worker requests a handoff to `http` (nothing to push: the watcher completes it); resolves once completed. */
async function handOff(s: Setup, title: string): Promise<void> {
  const session = await s.worker.call<{ id: string }>("create", { title });
  expect(await s.worker.call("handoff", { method: "request", args: [session.id, "http"] })).toBe(
    true,
  );
  const state = async () =>
    (await s.probe.query("SELECT handoff_state FROM sessions WHERE id = $1", [session.id])).rows[0]
      ?.handoff_state;
  await until(`handoff ${title} completed`, async () => (await state()) === "completed", 30_000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe.skipIf(!pgEnabled)("handoff wake-ups on PostgreSQL", () => {
  it("an idle watcher polls slowly and is woken by a handoff another process requests", async () => {
    const s = await setup(100);
    await until("the watcher listens", async () => (await listeners(s.url)).length === 1);
    // Idle: the fast rate (100 ms) would poll about 10 times in this window
    // (it was 250 ms over 2.5 s: the same count, 1.5 s longer).
    const before = total(s.watcher.counts.polls);
    await sleep(1_000);
    const idlePolls = total(s.watcher.counts.polls) - before;
    expect(idlePolls).toBeLessThanOrEqual(2);
    // The claim comes from the notification's poll, not from a timer.
    await handOff(s, "pushed");
    expect(s.watcher.counts.claims).toEqual({ timer: 0, notify: 1, listening: 0 });
    expect(s.watcher.counts.polls.notify).toBeGreaterThanOrEqual(1);
    expect(HANDOFF_FALLBACK_POLL_MS).toBeGreaterThanOrEqual(5_000);
    expect(s.warnings).toEqual([]);
  });

  it("with its LISTEN connection cut and no way back, work is picked up by fast polling; it listens again once it can", async () => {
    const s = await setup(50);
    await until("the watcher listens", async () => (await listeners(s.url)).length === 1);
    const [first] = await listeners(s.url);
    await handOff(s, "warm-up"); // the pool and this gateway's presence are connected
    const database = new URL(s.url).pathname.slice(1);
    const allow = (on: boolean) =>
      withPgClient(PG_ADMIN_URL, (c) =>
        c.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS ${on}`),
      );
    await allow(false);
    cleanup.push(() => allow(true));
    await withPgClient(PG_ADMIN_URL, (c) => c.query("SELECT pg_terminate_backend($1)", [first]));
    await until("the LISTEN connection is gone", async () => (await listeners(s.url)).length === 0);
    // Down: polled at gateway.handoffPollMs (50 ms), not every 5 s (20 polls would take 100 s).
    const timerPolls = s.watcher.counts.polls.timer;
    await until("fast polls", () => s.watcher.counts.polls.timer >= timerPolls + 20, 15_000);
    const claims = { ...s.watcher.counts.claims };
    await handOff(s, "while down");
    // Claimed by a timer's poll: nobody listened, and nobody could connect to.
    expect(s.watcher.counts.claims).toEqual({ ...claims, timer: claims.timer + 1 });
    // Connections allowed again: the listener reconnects (backoff at most 5 s) and is woken again.
    await allow(true);
    await until(
      "a new LISTEN connection",
      async () => (await listeners(s.url)).some((pid) => pid !== first),
      20_000,
    );
    await until("the watcher is live again", () => s.watcher.counts.polls.listening >= 2);
    await handOff(s, "after reconnect");
    expect(s.watcher.counts.claims.notify).toBe(claims.notify + 1);
  });

  it("on SQLite a commit wakes the watcher (the WAL index watch); without one it polls only at the fallback rate", async () => {
    const home = tempHome();
    const store = await openStore({ home, env: {} });
    cleanup.push(() => store.close());
    const config = { ...store.config, gateway: { ...store.config.gateway, handoffPollMs: 20 } };
    const runtime = { profile: "default", store } as ProfileRuntime;
    const log = { info: () => undefined, warn: () => undefined };
    const watcher = new HandoffWatcher(new Map([["default", runtime]]), () => config, log);
    await watcher.start();
    cleanup.push(() => watcher.stop(0));
    // Idle: 1 s would be 50 polls at handoffPollMs; the fallback rate makes it 1 at most.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(watcher.counts.polls.timer).toBeLessThanOrEqual(2);
    // A handoff requested by another process's commit wakes it.
    const other = await openStore({ home, env: {} });
    cleanup.push(() => other.close());
    const session = await other.sessions.create({ title: "to the gateway" });
    expect(await other.handoffs.request(session.id, "http")).toBe(true);
    await until("woken by the commit", () => watcher.counts.claims.notify >= 1, 15_000);
  });

  it("a gateway process listens on its own connection and delivers a handoff another process requests on the notification", async () => {
    const url = await freshPgDatabase();
    const home = tempHome();
    writeConfig(home, { store: { url } });
    const gw = await startGateway(home);
    cleanup.push(() => gw.kill("SIGKILL"));
    const mine = `:${gw.child.pid}@`;
    await until("the gateway listens", async () =>
      (await listening(url)).some((l) => l.application_name.includes(mine)),
    );
    const store = await openStore({ home: tempHome(), url, env: {} });
    cleanup.push(() => store.close());
    const session = await store.sessions.create({ title: "to the gateway" });
    expect(await store.handoffs.request(session.id, "http")).toBe(true);
    await until("delivered", () => gw.logEvents("handoff.completed").length === 1, 30_000);
    expect(gw.logEvents("handoff.completed")[0]).toMatchObject({
      session: session.id,
      via: "notify",
    });
    expect((await store.sessions.require(session.id)).handoff?.state).toBe("completed");
  });

  it("two profiles in two schemas of one database: a request wakes its own profile's watcher only", async () => {
    const url = await freshPgDatabase();
    const woken = { a: 0, b: 0 };
    const stores: Record<"a" | "b", Store> = {} as never;
    for (const schema of ["a", "b"] as const) {
      const store = await openStore({
        home: tempHome(),
        url,
        env: {},
        config: { store: { pg: { schema } } },
      });
      cleanup.push(() => store.close());
      let up!: () => void;
      const live = new Promise<void>((resolve) => {
        up = resolve;
      });
      const watch = await store.handoffs.watch({
        wake: () => void woken[schema]++,
        live: (on) => on && up(),
      });
      cleanup.push(() => watch.stop());
      await live;
      stores[schema] = store;
    }
    const listens = (await listening(url)).length;
    expect(listens).toBe(2);
    const sa = await stores.a.sessions.create();
    expect(await stores.a.handoffs.request(sa.id, "http")).toBe(true);
    await until("a woken", () => woken.a >= 1);
    const sb = await stores.b.sessions.create();
    expect(await stores.b.handoffs.request(sb.id, "http")).toBe(true);
    await until("b woken", () => woken.b >= 1);
    // Delivered in commit order: had b listened to a's channel, a's notification would have come first.
    expect(woken).toEqual({ a: 1, b: 1 });
  });
});

import { describe, expect, it } from "vitest";
import { until } from "../helpers/process.js";
import { rejection } from "./errors.js";
import { backends, type Modules } from "./pg-modules.js";

/** The session's handoff as the store reports it. */
async function handoffOf(m: Modules, id: string) {
  const [session] = await m.browse.sessionsById([id]);
  return session?.handoff;
}

describe.each(backends)("handoffs (D5) on $name", (backend) => {
  it("walks pending -> running -> completed, each step a compare-and-set that reports whether it won", async () => {
    const m = await backend.open();
    const sid = await m.seed.session();
    expect(await handoffOf(m, sid)).toBeNull();
    expect(await m.handoffs.request(sid, "http")).toBe(true);
    expect(await handoffOf(m, sid)).toMatchObject({
      state: "pending",
      platform: "http",
      owner: null,
      error: null,
    });
    // Refused while pending.
    expect(await m.handoffs.request(sid, "telegram")).toBe(false);
    expect(await m.handoffs.claim(sid, "gw-a")).toBe(true);
    expect(await m.handoffs.claim(sid, "gw-b")).toBe(false);
    // Refused while running, by anyone.
    expect(await m.handoffs.request(sid, "telegram")).toBe(false);
    // A waiter may not fail a running row; only the owner completes, fails or heartbeats it.
    expect(await m.handoffs.failPending(sid, "timed out")).toBe(false);
    expect(await m.handoffs.complete(sid, "gw-b")).toBe(false);
    expect(await m.handoffs.fail(sid, "gw-b", "nope")).toBe(false);
    expect(await m.handoffs.heartbeat(sid, "gw-b")).toBe(false);
    const before = (await handoffOf(m, sid))!.updatedAt!;
    expect(await m.handoffs.heartbeat(sid, "gw-a")).toBe(true);
    expect((await handoffOf(m, sid))!.updatedAt!).toBeGreaterThanOrEqual(before);
    expect(await handoffOf(m, sid)).toMatchObject({
      state: "running",
      platform: "http",
      owner: "gw-a",
    });
    expect(await m.handoffs.complete(sid, "gw-a")).toBe(true);
    expect(await handoffOf(m, sid)).toMatchObject({
      state: "completed",
      owner: "gw-a",
      error: null,
    });
    // Finished: no more transitions but a new request.
    expect(await m.handoffs.complete(sid, "gw-a")).toBe(false);
    expect(await m.handoffs.heartbeat(sid, "gw-a")).toBe(false);
    expect(await m.handoffs.request(sid, "telegram")).toBe(true);
    expect(await handoffOf(m, sid)).toMatchObject({
      state: "pending",
      platform: "telegram",
      owner: null,
    });
  });

  it("watch: only a request that lands wakes a watcher, where the backend pushes (PostgreSQL); SQLite wakes on commits", async () => {
    const m = await backend.open();
    const events: string[] = [];
    let listening!: () => void;
    const up = new Promise<void>((resolve) => {
      listening = resolve;
    });
    const watch = await m.handoffs.watch({
      wake: () => events.push("wake"),
      live: (on) => {
        events.push(on ? "up" : "down");
        if (on) listening();
      },
    });
    try {
      if (backend.name === "postgres") await up;
      const sid = await m.seed.session();
      expect(await m.handoffs.request(sid, "http")).toBe(true);
      expect(await m.handoffs.request(sid, "http")).toBe(false); // refused: no wake-up
      expect(await m.handoffs.claim(sid, "gw-a")).toBe(true);
      expect(await m.handoffs.heartbeat(sid, "gw-a")).toBe(true);
      expect(await m.handoffs.complete(sid, "gw-a")).toBe(true);
      expect(await m.handoffs.request(sid, "http")).toBe(true);
      if (backend.name === "sqlite") {
        // No notifications: the watch is live at once and wakes on any commit it sees in the
        // wal-index (src/store/sqlite/commit-watch.ts), a superset the watcher's query sorts out.
        await until("a wake-up", () => events.includes("wake"));
        expect(events[0]).toBe("up");
        expect(events).not.toContain("down");
        return;
      }
      // Notifications arrive in commit order: any from the steps between would come before the second.
      await until("two wake-ups", () => events.filter((e) => e === "wake").length === 2);
      expect(events).toEqual(["up", "wake", "wake"]);
    } finally {
      await watch.stop();
    }
  });

  it("fails: by its owner while running, by a waiter only while pending; a failed one may be requested again", async () => {
    const m = await backend.open();
    const a = await m.seed.session();
    expect(await m.handoffs.request(a, "http")).toBe(true);
    expect(await m.handoffs.claim(a, "gw-a")).toBe(true);
    expect(await m.handoffs.fail(a, "gw-a", "adapter said 500")).toBe(true);
    expect(await handoffOf(m, a)).toMatchObject({
      state: "failed",
      owner: "gw-a",
      error: "adapter said 500",
    });
    expect(await m.handoffs.fail(a, "gw-a", "again")).toBe(false);

    const b = await m.seed.session();
    expect(await m.handoffs.request(b, "http")).toBe(true);
    expect(await m.handoffs.failPending(b, "nobody claimed it within 1500 ms")).toBe(true);
    expect(await handoffOf(m, b)).toMatchObject({
      state: "failed",
      owner: null,
      error: "nobody claimed it within 1500 ms",
    });
    // A late claim of a failed row loses.
    expect(await m.handoffs.claim(b, "gw-late")).toBe(false);
    expect(await m.handoffs.request(b, "http")).toBe(true);
    expect(await handoffOf(m, b)).toMatchObject({ state: "pending", error: null });
  });

  it("refuses a missing session with HEARTH_SESSION_NOT_FOUND and an empty platform with a TypeError", async () => {
    const m = await backend.open();
    for (const call of [
      () => m.handoffs.request("no-such-session", "http"),
      () => m.handoffs.claim("no-such-session", "gw"),
      () => m.handoffs.complete("no-such-session", "gw"),
      () => m.handoffs.fail("no-such-session", "gw", "x"),
      () => m.handoffs.heartbeat("no-such-session", "gw"),
      () => m.handoffs.failPending("no-such-session", "x"),
    ]) {
      expect((await rejection(call())).code).toBe("HEARTH_SESSION_NOT_FOUND");
    }
    const sid = await m.seed.session();
    expect(await rejection(m.handoffs.request(sid, ""))).toBeInstanceOf(TypeError);
    expect(await handoffOf(m, sid)).toBeNull();
  });

  it("lists sessions by handoff state, oldest first, up to the limit", async () => {
    const m = await backend.open();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sid = await m.seed.session();
      expect(await m.handoffs.request(sid, "http")).toBe(true);
      ids.push(sid);
      // handoff_updated_at is in milliseconds: keep the order unambiguous.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect(await m.handoffs.claim(ids[1]!, "gw")).toBe(true);
    expect((await m.handoffs.list("pending")).map((s) => s.id)).toEqual([ids[0], ids[2]]);
    expect((await m.handoffs.list("pending", 1)).map((s) => s.id)).toEqual([ids[0]]);
    const running = await m.handoffs.list("running");
    expect(running.map((s) => s.id)).toEqual([ids[1]]);
    expect(running[0]!.handoff).toMatchObject({ state: "running", owner: "gw", platform: "http" });
    expect(typeof running[0]!.handoff!.updatedAt).toBe("number");
    expect(typeof running[0]!.createdAt).toBe("number");
    expect(await m.handoffs.list("completed")).toEqual([]);
  });

  it("failOrphans fails running rows of owners that are gone (never re-queues) and leaves the rest", async () => {
    const m = await backend.open();
    // The gateway that dies: another store on the same database, closed after claiming.
    const gone = await m.reopen();
    const [dead, live, pending] = [
      await m.seed.session(),
      await m.seed.session(),
      await m.seed.session(),
    ];
    for (const sid of [dead, live, pending])
      expect(await m.handoffs.request(sid, "http")).toBe(true);
    expect(await gone.handoffs.claim(dead, "gw-dead")).toBe(true);
    expect(await m.handoffs.claim(live, "gw-live")).toBe(true);
    await gone.close();
    expect(await m.handoffs.failOrphans(["gw-live"], "its gateway died")).toEqual([dead]);
    expect(await handoffOf(m, dead)).toMatchObject({
      state: "failed",
      owner: "gw-dead",
      error: "its gateway died",
    });
    expect(await handoffOf(m, live)).toMatchObject({ state: "running", owner: "gw-live" });
    expect(await handoffOf(m, pending)).toMatchObject({ state: "pending" });
    expect(await m.handoffs.failOrphans(["gw-live"], "again")).toEqual([]);
  });

  it("one claim wins among many concurrent claimers on two connections", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    const sid = await m.seed.session();
    expect(await m.handoffs.request(sid, "http")).toBe(true);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? other : m).handoffs.claim(sid, `gw-${i}`)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    const winner = `gw-${claims.indexOf(true)}`;
    expect(await handoffOf(m, sid)).toMatchObject({ state: "running", owner: winner });
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { isHearthError } from "../../../src/index.js";
import { openSqliteStore } from "../../helpers/home.js";
import { expectHearthError, TestHomes } from "./fixture.js";

const homes = new TestHomes();

afterEach(async () => {
  await homes.cleanup();
});

describe("close()", () => {
  it("waits for the writes issued before it; calls after it are refused", async () => {
    const home = homes.makeHome();
    const store = await openSqliteStore({ home, env: {} });
    const session = await store.sessions.create();
    const appends = Array.from({ length: 200 }, (_, i) =>
      store.messages.append(session.id, { role: "user", content: `m${i}` }),
    );
    const closing = store.close();
    // Refused at once; its handler is attached now, since the appends before
    // it resolve only after their WAL fsync (a later turn of the loop).
    const late = expectHearthError(
      store.messages.append(session.id, { role: "user", content: "late" }),
      "HEARTH_STORE_CLOSED",
    );
    const results = await Promise.allSettled(appends);
    await closing;
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(200);
    await late;
    expect(store.isClosed).toBe(true);
    await store.close(); // idempotent

    const again = await homes.open(home);
    expect((await again.sessions.require(session.id)).messageCount).toBe(200);
  });

  it("Symbol.asyncDispose closes the store", async () => {
    const store = await openSqliteStore({ home: homes.makeHome(), env: {} });
    const session = await store.sessions.create();
    const pending = store.messages.append(session.id, { role: "user", content: "x" });
    await store[Symbol.asyncDispose]();
    await pending;
    await expectHearthError(store.sessions.get(session.id), "HEARTH_STORE_CLOSED");
  });
});

describe("AbortSignal", () => {
  it("an already aborted signal writes nothing", async () => {
    const store = await homes.open(homes.makeHome());
    const session = await store.sessions.create();
    const err = await expectHearthError(
      store.messages.append(
        session.id,
        { role: "user", content: "x" },
        { signal: AbortSignal.abort() },
      ),
      "HEARTH_ABORTED",
    );
    expect(err.hint).toContain("nothing was written");
    expect((await store.counts()).messages).toBe(0);
  });

  it("an abort while waiting for the write lock ends the wait, and the write never happens", async () => {
    const store = await homes.open(homes.makeHome());
    const session = await store.sessions.create();
    // Hold this process's write lock: a structural operation keeps it for as long as fn runs.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const inside = new Promise<void>((resolve) => {
      started = resolve;
    });
    const gate = store.withStructuralGate("test hold", async () => {
      started();
      await held;
    });
    await inside;
    const controller = new AbortController();
    const waiting = store.messages.append(
      session.id,
      { role: "user", content: "queued" },
      { signal: controller.signal },
    );
    const other = store.messages.append(session.id, { role: "user", content: "not aborted" });
    controller.abort(new Error("the user gave up"));
    const outcome = await waiting.then(
      () => "written",
      (err: unknown) => (isHearthError(err, "HEARTH_ABORTED") ? "aborted" : String(err)),
    );
    expect(outcome).toBe("aborted");
    release();
    await gate;
    await other;
    const contents = (await store.messages.load(session.id)).map((m) => m.content);
    expect(contents).toEqual(["not aborted"]);
  });
});

describe("close() and an abandoned export", () => {
  it("does not wait for an export a reader stopped reading half-way", async () => {
    const store = await openSqliteStore({ home: homes.makeHome(), env: {} });
    const session = await store.sessions.create();
    await store.messages.append(session.id, { role: "user", content: "x" });
    const chunks = store.export({ format: "jsonl" });
    await chunks.next(); // started, never finished nor returned
    await store.close(); // resolves: this test would time out otherwise
    expect(store.isClosed).toBe(true);
  });
});

describe("AbortSignal at a parked door", () => {
  it("ends the wait of a call parked for a maintenance window; nothing is written or left counted", async () => {
    const store = await openSqliteStore({ home: homes.makeHome(), env: {} });
    const session = await store.sessions.create();
    await store.park();
    const controller = new AbortController();
    const waiting = store.messages.append(
      session.id,
      { role: "user", content: "parked" },
      { signal: controller.signal },
    );
    controller.abort();
    await expectHearthError(waiting, "HEARTH_ABORTED");
    await store.resume();
    expect((await store.counts()).messages).toBe(0);
    // The aborted call left the door when the window ended: a new park and close do not wait for it.
    await store.park();
    await store.resume();
    await store.close();
    expect(store.isClosed).toBe(true);
  });
});

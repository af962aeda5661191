import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe("the store's door during a maintenance window (M5)", () => {
  it("a call that gave up waiting at the door is not counted in flight once the window ends", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home, config: { maintenance: { maxParkMs: 150 } } });
    open.push(store);
    const s = await store.sessions.create({ title: "door" });
    await store.park();
    await expect(store.sessions.get(s.id)).rejects.toMatchObject({
      code: "HEARTH_MAINTENANCE_RUNNING",
    });
    await store.resume();
    expect((await store.sessions.get(s.id))?.title).toBe("door");
    // The next window parks at once: nothing is left counted in flight.
    await store.park();
    expect(store.isParked).toBe(true);
    await store.resume();
  });

  it("lets waiting calls in when the window ends", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    open.push(store);
    const s = await store.sessions.create({ title: "waits" });
    await store.park();
    const waiting = store.sessions.get(s.id);
    await store.resume();
    expect((await waiting)?.title).toBe("waits");
  });

  it("a store opened and closed while another is parked leaves the parked one its connections (the dashboard's row write during a window)", async () => {
    const home = tempHome();
    const writer = await openSqliteStore({ home });
    const s = await writer.sessions.create({ title: "kept" });
    await writer.close();
    const reader = await openSqliteStore({ home, role: "reader" });
    open.push(reader);
    await reader.park();
    // A short-lived writer of the same process opens during the window; its
    // call waits at the door, goes through when the window ends, and it closes.
    const passing = await openSqliteStore({ home });
    const renamed = passing.sessions.rename(s.id, "renamed");
    await reader.resume();
    await renamed;
    await passing.close();
    expect((await reader.sessions.get(s.id))?.title).toBe("renamed");
  });
});

import { unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

// A long-lived dashboard whose store's -wal and -shm someone removed (F3):
// its read-only store is never refused by the guard (only writes are), so
// without a reattach it served the old generation for good, and its row
// writes (which share that connection) failed with HEARTH_GENERATION_CHANGED.
// It reattaches as the gateway does (src/dashboard/recovery.ts).

afterEach(stopDashboards);

async function createSession(home: string, title: string): Promise<string> {
  const store = await openStore({ home });
  try {
    return (await store.sessions.create({ title, source: "cli" })).id;
  } finally {
    await store.close();
  }
}

describe("the dashboard recovers from a generation change (F3)", () => {
  it("serves the current files after -wal and -shm are removed under it, and its writes land there", async () => {
    const home = tempHome();
    await createSession(home, "before");
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const titles = async () => {
      const r = await browser.api("GET", "/api/sessions");
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as { title: string }[]).map((s) => s.title).sort();
    };
    expect(await titles()).toEqual(["before"]);

    // A careless cleanup: checkpoint everything into the database, then
    // remove the sidecars; another process then writes on the new files.
    const path = await withStore(home, async (s) => s.path);
    const raw = new Database(path);
    raw.pragma("wal_checkpoint(PASSIVE)");
    raw.close();
    unlinkSync(`${path}-wal`);
    unlinkSync(`${path}-shm`);
    const after = await createSession(home, "after");

    // The next request already reads the current files (no wait: its preHandler reattached).
    expect(await titles()).toEqual(["after", "before"]);
    // A row write through the dashboard lands where every other process reads.
    const renamed = await browser.api("PATCH", `/api/sessions/default/${after}`, {
      body: { title: "renamed by the dashboard" },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const stored = await withStore(home, (s) => s.sessions.require(after));
    expect(stored.title).toBe("renamed by the dashboard");
    expect(await titles()).toEqual(["before", "renamed by the dashboard"]);

    const reopened = dash.stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { event?: string; level?: number; profile?: string })
      .filter((e) => e.event === "store.reopened");
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({ level: 40, profile: "default" });
  });
});

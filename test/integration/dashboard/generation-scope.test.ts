import { unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

// Before each request the dashboard checks the files (an fstat or readlink per
// file) of the profiles the request reads, and only those (src/dashboard/
// profiles-read.ts): a request for one profile does not touch another's, so
// another's changed files are reattached by the first request that reads it.

afterEach(stopDashboards);

async function createSession(home: string, profile: string, title: string): Promise<string> {
  const store = await openStore({ home, profile });
  try {
    return (await store.sessions.create({ title, source: "cli" })).id;
  } finally {
    await store.close();
  }
}

/** Remove a profile's -wal and -shm (after a checkpoint), as a careless cleanup would. */
async function removeSidecars(home: string, profile: string): Promise<void> {
  const path = await withStore(home, async (s) => s.path, profile);
  const raw = new Database(path);
  raw.pragma("wal_checkpoint(PASSIVE)");
  raw.close();
  unlinkSync(`${path}-wal`);
  unlinkSync(`${path}-shm`);
}

describe("the dashboard checks the files of the profiles a request reads", () => {
  it("does not reattach profile side's store for requests that read only default; the first request reading side does", async () => {
    const home = tempHome();
    const mine = await createSession(home, "default", "mine");
    await createSession(home, "side", "theirs");
    const dash = await startDashboard(home, { profiles: ["default", "side"] });
    const browser = await dash.logIn();
    const titles = async (query: string) => {
      const r = await browser.api("GET", `/api/sessions${query}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as { title: string }[]).map((s) => s.title).sort();
    };
    expect(await titles("?profile=side")).toEqual(["theirs"]);

    await removeSidecars(home, "side");
    await createSession(home, "side", "after");

    // Requests that read default alone (path, query, body) and ones that read no store.
    expect(await titles("?profile=default")).toEqual(["mine"]);
    expect((await browser.api("GET", `/api/sessions/default/${mine}`)).status).toBe(200);
    const renamed = await browser.api("PATCH", `/api/sessions/default/${mine}`, {
      body: { title: "mine, renamed" },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect((await browser.api("GET", "/sessions")).status).toBe(200);
    expect((await browser.api("GET", "/api/me")).status).toBe(200);
    // Log lines carry the dashboard's clock (ms): every one logged for the requests above is
    // stamped at most `readDefault`; the first one after the next ms is side's own request's.
    const readDefault = Date.now();
    await expect.poll(() => Date.now()).toBeGreaterThan(readDefault + 1);

    // The first request that reads side reattaches it, and sees the session written since.
    expect(await titles("?profile=side")).toEqual(["after", "theirs"]);
    const reopened = () =>
      dash.stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { event?: string; profile?: string; time?: number })
        .filter((e) => e.event === "store.reopened");
    await expect.poll(() => reopened().length).toBe(1);
    expect(reopened()[0]!.profile).toBe("side");
    expect(reopened()[0]!.time).toBeGreaterThan(readDefault);
    // Every profile's list: both current.
    expect(await titles("")).toEqual(["after", "mine, renamed", "theirs"]);
    expect(reopened()).toHaveLength(1);
  });
});

import { existsSync, unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { startDashboard } from "../../helpers/dashboard.js";
import { spawnGateway, startGateway, withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

/** The user messages of the home's one session, in order. */
function userContents(home: string) {
  return withStore(home, async (s) => {
    const [session] = (await s.sessions.list()).items;
    return (await s.messages.load(session!.id))
      .filter((m) => m.role === "user")
      .map((m) => m.content);
  });
}

/** A gateway that acknowledged one message, whose -wal and -shm someone then removed. */
async function postThenRemoveWal(home: string, content: string) {
  const gw = await startGateway(home);
  expect((await gw.post({ platform: "t", chat: "1", content, clientId: "c1" })).status).toBe(200);
  unlinkSync(`${gw.path}-wal`);
  unlinkSync(`${gw.path}-shm`);
  return gw;
}

describe("the gateway recovers from a generation change (F3)", () => {
  it("reattaches after -wal and -shm are removed under it: one failed request, then service goes on", async () => {
    const home = tempHome();
    (await openStore({ home })).close();
    const gw = await startGateway(home);
    const first = await gw.post({ platform: "t", chat: "1", content: "before", clientId: "c1" });
    expect(first.status).toBe(200);

    // A careless cleanup: checkpoint everything into the database, then remove the sidecars.
    const raw = new Database(gw.path);
    raw.pragma("wal_checkpoint(PASSIVE)");
    raw.close();
    unlinkSync(`${gw.path}-wal`);
    unlinkSync(`${gw.path}-shm`);

    const sent = { platform: "t", chat: "1", content: "after", clientId: "c2" };
    const refused = await fetch(gw.url("/v1/messages"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(sent),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("0");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "HEARTH_GENERATION_CHANGED",
    );
    // The client's one retry, and everything after it, is served on the new files.
    for (const body of [sent, { ...sent, content: "later", clientId: "c3" }]) {
      const r = await gw.post(body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const reopened = gw.logEvents("store.reopened");
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({ level: 40, profile: "default" });

    // Every acknowledged message is in the store, once.
    const contents = await userContents(home);
    expect(contents).toEqual(["before", "after", "later"]);
    // Its kernel locks held throughout: it is still the one gateway, a writer, named by ps (P3, P5).
    const second = spawnGateway(home);
    expect((await second.exited).code).toBe(78);
    const ps = await runCli(["--json", "ps"], { home });
    const holder = JSON.parse(ps.stdout).profiles[0].holders.find(
      (h: { pid: number }) => h.pid === gw.pid,
    );
    expect(holder.roles).toEqual(expect.arrayContaining(["reader", "writer"]));
  });

  it("saves what only the removed WAL held (a new home: the schema too) instead of failing every request after", async () => {
    const home = tempHome();
    // No checkpoint: the tables and the message live only in the WAL about to go.
    const gw = await postThenRemoveWal(home, "before");

    const sent = { platform: "t", chat: "1", content: "after", clientId: "c2" };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await gw.post(sent)).status);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 503)).toBe(true);
    expect(statuses.at(-1)).toBe(200);
    expect(gw.logEvents("store.ghost_wal_saved")[0]).toMatchObject({ level: 40 });
    const later = await gw.post({ ...sent, content: "later", clientId: "c3" });
    expect(later.status).toBe(200);
    await gw.kill("SIGTERM");

    const contents = await userContents(home);
    expect(contents).toEqual(["before", "after", "later"]);
  });

  it("stops with exit 78 and a kept copy when another process already writes through new files", async () => {
    const home = tempHome();
    const gw = await postThenRemoveWal(home, "only here");
    // Another process opens the profile on new files and writes.
    const other = await openStore({ home });
    await other.sessions.create({ title: "newcomer" });

    const refused = await gw.post({ platform: "t", chat: "1", content: "after", clientId: "c2" });
    expect(refused.status).toBe(503);
    const exit = await gw.exited;
    expect(exit.code).toBe(78);
    const [lost] = gw.logEvents("store.generation_lost");
    expect(lost).toMatchObject({ level: 50, profile: "default" });
    const copy = (lost!.err as { details: { copy: string } }).details.copy;
    expect(existsSync(copy)).toBe(true);
    expect(gw.stderr).toContain("HEARTH_GENERATION_LOST");
    await other.close();
  });

  it("stops with exit 78 too when a maintenance window's park finds the loss first", async () => {
    const home = tempHome();
    const gw = await postThenRemoveWal(home, "only here");
    // A dashboard started now reads through new -wal and -shm: the removed WAL can no longer be saved.
    const dashboard = await startDashboard(home);
    try {
      expect(existsSync(`${gw.path}-shm`)).toBe(true);
      const window = await runCli(["--json", "sessions", "optimize", "--window"], { home });
      expect(window.code).toBe(3);
      expect(JSON.parse(window.stderr).error.code).toBe("HEARTH_STORE_HELD");
      expect(window.stderr).toContain("cannot be put back into the database");
      // As when its own reattach finds the loss: the gateway does not serve on quietly.
      const exit = await Promise.race([
        gw.exited,
        new Promise<{ code: string }>((r) =>
          setTimeout(() => r({ code: "still serving" }), 20_000),
        ),
      ]);
      expect(exit.code).toBe(78);
      const [lost] = gw.logEvents("store.generation_lost");
      expect(lost).toMatchObject({ level: 50, profile: "default" });
    } finally {
      await dashboard.kill("SIGKILL");
    }
  });
});

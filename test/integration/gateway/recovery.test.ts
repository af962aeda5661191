import { unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { spawnGateway, startGateway, withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

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
    const contents = await withStore(home, async (s) => {
      const [session] = (await s.sessions.list()).items;
      return (await s.messages.load(session!.id))
        .filter((m) => m.role === "user")
        .map((m) => m.content);
    });
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
});

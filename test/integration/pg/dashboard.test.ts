/**
 * The dashboard on a PostgreSQL store: it starts with store.url in the
 * home's configuration, lists, reads, searches and writes rows there.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

afterEach(async () => {
  await stopDashboards();
});

describe.skipIf(!pgEnabled)("the dashboard on PostgreSQL", () => {
  it("lists, reads, searches and renames sessions stored in PostgreSQL", async () => {
    const url = await freshPgDatabase();
    const home = tempHome();
    writeConfig(home, { store: { url } });
    const store = await openStore({ home });
    expect(store.backend).toBe("postgres");
    const session = await store.sessions.create({ source: "web", title: "on postgres" });
    await store.messages.append(session.id, { role: "user", content: "lighthouse keeper" });
    await store.close();

    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const list = await browser.api("GET", "/api/sessions?limit=5");
    expect(list.status).toBe(200);
    expect(list.body.items.map((s: { id: string }) => s.id)).toEqual([session.id]);
    const messages = await browser.api(
      "GET",
      `/api/sessions/default/${session.id}/messages?limit=5`,
    );
    expect(messages.status).toBe(200);
    expect(messages.body.items.map((m: { content: string }) => m.content)).toEqual([
      "lighthouse keeper",
    ]);
    const hits = await browser.api("GET", "/api/search?q=lighthouse");
    expect(hits.status).toBe(200);
    expect(hits.body.items.map((h: { sessionId: string }) => h.sessionId)).toEqual([session.id]);
    const renamed = await browser.api("PATCH", `/api/sessions/default/${session.id}`, {
      body: { title: "renamed on postgres" },
    });
    expect(renamed.status).toBe(200);

    const check = await openStore({ home, role: "reader" });
    expect((await check.sessions.get(session.id))?.title).toBe("renamed on postgres");
    await check.close();
  });
});

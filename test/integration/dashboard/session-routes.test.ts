import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ProfileStores } from "../../../src/dashboard/profiles.js";
import { registerSessionChangeRoutes } from "../../../src/dashboard/sessions/changes.js";
import { decodeCursor, encodeCursor } from "../../../src/dashboard/sessions/cursor.js";
import { registerSessionDetailRoutes } from "../../../src/dashboard/sessions/detail.js";
import { registerSessionExportRoutes } from "../../../src/dashboard/sessions/export.js";
import { registerSessionListRoutes } from "../../../src/dashboard/sessions/list.js";
import { registerSessionMaintenanceRoutes } from "../../../src/dashboard/sessions/maintenance.js";
import { tempHome } from "../../helpers/home.js";

/**
 * The dashboard's session route groups, each registered on a bare Fastify
 * instance over real stores (ProfileStores on a temp home: a reader per
 * profile, a writer per change), called with app.inject().
 */

let stores: ProfileStores | undefined;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  await stores?.close();
  app = undefined;
  stores = undefined;
});

async function bare(profiles = ["default"]) {
  const s = await ProfileStores.open(tempHome(), profiles);
  stores = s;
  const a = Fastify({ logger: false });
  // What the dashboard's preHandler gives a login of the operator's link: every profile.
  a.addHook("onRequest", async (request) => {
    request.stores = s;
  });
  app = a;
  return { app: a, stores: s };
}

type Page = {
  items: { profile: string; id: string; lastActivityAt: number }[];
  nextCursor: string | null;
};

/** A session with `n` messages on `profile`, written as the dashboard writes: through withWriter. */
async function session(s: ProfileStores, profile: string, source: string, n = 1) {
  return s.withWriter(profile, async (store) => {
    const created = await store.sessions.create({ source });
    for (let i = 0; i < n; i++)
      await store.messages.append(created.id, { role: "user", content: `m${i}` });
    return created;
  });
}

describe("dashboard session route groups on a bare Fastify instance", () => {
  it("the list pages one keyset over every profile: newest first, each session once", async () => {
    const { app, stores } = await bare(["default", "work"]);
    registerSessionListRoutes(app);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await session(stores, i % 2 ? "work" : "default", i < 3 ? "cli" : "telegram")).id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const seen: { profile: string; id: string; lastActivityAt: number }[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: { statusCode: number; json(): Page } = await app.inject({
        method: "GET",
        url: `/api/sessions?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      });
      expect(res.statusCode).toBe(200);
      const body: Page = res.json();
      seen.push(...body.items);
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    expect(seen.map((s) => s.id)).toEqual([...made].reverse());
    expect(seen.map((s) => s.profile)).toEqual(["default", "work", "default", "work", "default"]);

    const work = await app.inject({ method: "GET", url: "/api/sessions?profile=work" });
    expect(work.json().items.map((s: { id: string }) => s.id)).toEqual([made[3], made[1]]);
    // One store: a page that is full and has more after it says so.
    const firstOfWork = await app.inject({
      method: "GET",
      url: "/api/sessions?profile=work&limit=1",
    });
    expect(firstOfWork.json().items.map((s: { id: string }) => s.id)).toEqual([made[3]]);
    expect(firstOfWork.json().nextCursor).not.toBeNull();
    const lastOfWork = await app.inject({
      method: "GET",
      url: `/api/sessions?profile=work&limit=1&cursor=${firstOfWork.json().nextCursor}`,
    });
    expect(lastOfWork.json()).toMatchObject({ items: [{ id: made[1] }], nextCursor: null });
    const telegram = await app.inject({ method: "GET", url: "/api/sessions?platform=telegram" });
    expect(telegram.json().items).toHaveLength(2);
    const platforms = await app.inject({ method: "GET", url: "/api/platforms" });
    expect(platforms.json()).toEqual({ platforms: ["cli", "telegram"] });
  });

  it("a cursor is one the dashboard returned, or a RangeError", () => {
    expect(decodeCursor(encodeCursor(1234, "abc"))).toEqual({ lastActivityAt: 1234, id: "abc" });
    expect(() => decodeCursor("garbage")).toThrow(RangeError);
    const forged = Buffer.from(JSON.stringify([1.5, "x"])).toString("base64url");
    expect(() => decodeCursor(forged)).toThrow("cursor is not one this dashboard returned");
  });

  it("one session with its transcript, a page at a time, newest first", async () => {
    const { app, stores } = await bare();
    registerSessionDetailRoutes(app);
    const s = await session(stores, "default", "cli", 5);
    const one = await app.inject({ method: "GET", url: `/api/sessions/default/${s.id}` });
    expect(one.json()).toMatchObject({
      profile: "default",
      session: { id: s.id },
      parent: null,
      children: [],
    });
    const page = await app.inject({
      method: "GET",
      url: `/api/sessions/default/${s.id}/messages?limit=3`,
    });
    const body = page.json();
    expect(body.items.map((m: { content: string }) => m.content)).toEqual(["m4", "m3", "m2"]);
    const rest = await app.inject({
      method: "GET",
      url: `/api/sessions/default/${s.id}/messages?limit=3&before=${body.nextBefore}`,
    });
    expect(rest.json().items.map((m: { content: string }) => m.content)).toEqual(["m1", "m0"]);
    expect(rest.json().nextBefore).toBeNull();
  });

  it("export: an attachment named after the session, JSONL by default, Markdown on request", async () => {
    const { app, stores } = await bare();
    registerSessionExportRoutes(app);
    const s = await session(stores, "default", "cli", 2);
    const jsonl = await app.inject({ method: "GET", url: `/api/sessions/default/${s.id}/export` });
    expect(jsonl.statusCode).toBe(200);
    expect(jsonl.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    expect(jsonl.headers["content-disposition"]).toBe(
      `attachment; filename="session-${s.id.replace(/[^A-Za-z0-9_-]/g, "_")}.jsonl"`,
    );
    expect(jsonl.body.trim().split("\n").length).toBeGreaterThanOrEqual(2);
    const md = await app.inject({
      method: "GET",
      url: `/api/sessions/default/${s.id}/export?format=markdown`,
    });
    expect(md.headers["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(md.headers["content-disposition"]).toMatch(/\.md"$/);
    expect(md.body).toContain("m1");
  });

  it("changes: rename and pin in one PATCH; bulk archive reports each session that failed", async () => {
    const { app, stores } = await bare();
    registerSessionChangeRoutes(app);
    const a = await session(stores, "default", "cli");
    const b = await session(stores, "default", "cli");
    const patched = await app.inject({
      method: "PATCH",
      url: `/api/sessions/default/${a.id}`,
      payload: { title: "Renamed", pinned: true },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().session).toMatchObject({ id: a.id, title: "Renamed", pinned: true });
    expect(await stores.reader("default").sessions.get(a.id)).toMatchObject({ title: "Renamed" });

    const bulk = await app.inject({
      method: "POST",
      url: "/api/sessions/bulk",
      payload: {
        action: "archive",
        sessions: [
          { profile: "default", id: b.id },
          { profile: "default", id: "no-such-session" },
        ],
      },
    });
    const body = bulk.json();
    expect(body.done).toEqual([{ profile: "default", id: b.id }]);
    expect(body.failed).toMatchObject([
      { profile: "default", id: "no-such-session", error: { code: "HEARTH_SESSION_NOT_FOUND" } },
    ]);
    expect((await stores.reader("default").sessions.get(b.id))?.archived).toBe(true);

    const deleted = await app.inject({ method: "DELETE", url: `/api/sessions/default/${b.id}` });
    expect(deleted.json()).toMatchObject({ profile: "default", id: b.id });
    expect(await stores.reader("default").sessions.get(b.id)).toBeNull();
  });

  it("delete-empty: a dry run lists and deletes nothing; the real one deletes only the empty sessions", async () => {
    const { app, stores } = await bare();
    registerSessionMaintenanceRoutes(app);
    const empty = await session(stores, "default", "cli", 0);
    const full = await session(stores, "default", "cli", 1);
    const post = (dryRun: boolean) =>
      app.inject({
        method: "POST",
        url: "/api/maintenance/delete-empty",
        payload: { profile: "default", dryRun },
      });
    expect((await post(true)).json()).toEqual({
      profile: "default",
      dryRun: true,
      deleted: [empty.id],
    });
    expect(await stores.reader("default").sessions.get(empty.id)).not.toBeNull();
    expect((await post(false)).json()).toEqual({
      profile: "default",
      dryRun: false,
      deleted: [empty.id],
    });
    expect(await stores.reader("default").sessions.get(empty.id)).toBeNull();
    expect(await stores.reader("default").sessions.get(full.id)).not.toBeNull();
  });
});

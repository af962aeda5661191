import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import {
  loginWithToken,
  SseReader,
  startDashboard,
  stopDashboards,
} from "../../helpers/dashboard.js";
import { withStore } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { hearth } from "../gateway/security-fixture.js";

afterEach(async () => {
  await stopDashboards();
  cleanupHomes();
});

/** A session with one message in `profile`, written beside the running dashboard. */
async function session(home: string, profile: string, content: string): Promise<string> {
  const store = await openStore({ home, profile });
  try {
    const s = await store.sessions.create({ source: "cli", title: content });
    await store.messages.append(s.id, { role: "user", content });
    return s.id;
  } finally {
    await store.close();
  }
}

async function setup() {
  const home = tempHome();
  const mine = await session(home, "default", "the default profile's secret");
  const theirs = await session(home, "side", "the side profile's note");
  const dash = await startDashboard(home, { profiles: ["default", "side"] });
  return { home, dash, mine, theirs };
}

describe("dashboard: a login sees only its token's profile and does only what its scope allows", () => {
  it("a pairing code of profile side logs in to side alone: every route refuses default with 403 HEARTH_PROFILE_DENIED", async () => {
    const { home, dash, mine, theirs } = await setup();
    const side = await loginWithToken(dash, home, "side");
    const me = await side.api("GET", "/api/me");
    expect(me.body).toMatchObject({ profiles: ["side"], scope: "chat", allProfiles: false });

    const list = await side.api("GET", "/api/sessions");
    expect(list.body.items.map((s: { id: string }) => s.id)).toEqual([theirs]);
    const search = await side.api("GET", "/api/search?q=secret");
    expect(JSON.stringify(search.body)).not.toContain(mine);
    const health = await side.api("GET", "/api/health");
    expect(health.body.profiles.map((p: { profile: string }) => p.profile)).toEqual(["side"]);
    const history = await side.api("GET", "/api/health/history");
    expect(history.body.profiles.map((p: { profile: string }) => p.profile)).toEqual(["side"]);
    const jobs = await side.api("GET", "/api/jobs");
    expect(jobs.status).toBe(200);

    for (const path of [
      "/api/sessions?profile=default",
      `/api/sessions/default/${mine}`,
      `/api/sessions/default/${mine}/messages`,
      `/api/sessions/default/${mine}/export`,
      "/api/search?q=secret&profile=default",
      "/api/health?profile=default",
      "/api/health/history?profile=default",
      `/api/events?watch=default/${mine}`,
      "/api/sessions?profile=nosuchprofile",
    ]) {
      const denied = await side.api("GET", path);
      expect({ path, status: denied.status, code: denied.body.error?.code }).toEqual({
        path,
        status: 403,
        code: "HEARTH_PROFILE_DENIED",
      });
      expect(JSON.stringify(denied.body), path).not.toContain("the default profile's secret");
    }
    const chat = await side.api("POST", "/api/chat", {
      body: { profile: "default", content: "hi" },
    });
    expect([chat.status, chat.body.error.code]).toEqual([403, "HEARTH_PROFILE_DENIED"]);
  });

  it("scopes: chat may not rename or delete, read may not chat; admin of side may not touch default, even in a bulk change", async () => {
    const { home, dash, mine, theirs } = await setup();
    const chatter = await loginWithToken(dash, home, "side");
    for (const [method, path, body] of [
      ["PATCH", `/api/sessions/side/${theirs}`, { title: "renamed" }],
      ["DELETE", `/api/sessions/side/${theirs}`, undefined],
      [
        "POST",
        "/api/sessions/bulk",
        { action: "archive", sessions: [{ profile: "side", id: theirs }] },
      ],
      ["POST", "/api/maintenance/delete-empty", { profile: "side" }],
      ["POST", "/api/backup", { profile: "side" }],
    ] as const) {
      const refused = await chatter.api(method, path, body === undefined ? {} : { body });
      expect({ path, status: refused.status }).toEqual({ path, status: 403 });
      expect(refused.body.error).toMatchObject({
        code: "HEARTH_SCOPE_DENIED",
        details: { needed: "admin", scope: "chat" },
      });
    }
    const after = await withStore(home, (s) => s.sessions.get(theirs), "side");
    expect(after).toMatchObject({ title: "the side profile's note", archived: false });

    const reader = await loginWithToken(dash, home, "side", "read");
    const talk = await reader.api("POST", "/api/chat", {
      body: { profile: "side", content: "hi" },
    });
    expect(talk.body.error).toMatchObject({
      code: "HEARTH_SCOPE_DENIED",
      details: { needed: "chat", scope: "read" },
    });
    expect((await reader.api("GET", `/api/sessions/side/${theirs}`)).status).toBe(200);
    expect((await reader.api("POST", "/api/logout")).status).toBe(200);

    const admin = await loginWithToken(dash, home, "side", "admin");
    const bulk = await admin.api("POST", "/api/sessions/bulk", {
      body: {
        action: "archive",
        sessions: [
          { profile: "side", id: theirs },
          { profile: "default", id: mine },
        ],
      },
    });
    expect([bulk.status, bulk.body.error.code]).toEqual([403, "HEARTH_PROFILE_DENIED"]);
    // Refused before anything was written, in either profile.
    expect((await withStore(home, (s) => s.sessions.get(theirs), "side"))?.archived).toBe(false);
    expect((await withStore(home, (s) => s.sessions.get(mine)))?.archived).toBe(false);
    const renamed = await admin.api("PATCH", `/api/sessions/side/${theirs}`, {
      body: { title: "renamed" },
    });
    expect(renamed.status).toBe(200);
  });

  it("the operator's own link sees and manages every profile; it is printed on stdout only, never on stderr", async () => {
    const { home, dash, mine } = await setup();
    const code = new URL(dash.login).searchParams.get("token")!;
    expect(code).toMatch(/^[A-Z0-9]{10}$/);
    const operator = await dash.logIn();
    expect((await operator.api("GET", "/api/me")).body).toMatchObject({
      profiles: ["default", "side"],
      scope: "admin",
      allProfiles: true,
    });
    const renamed = await operator.api("PATCH", `/api/sessions/default/${mine}`, {
      body: { title: "by the operator" },
    });
    expect(renamed.status).toBe(200);
    const linked = await hearth(home, "dashboard", "link");
    expect(linked.code).toBe(0);
    const fresh = new URL(linked.stdout.trim()).searchParams.get("token")!;
    expect(linked.stderr).not.toContain(fresh);
    const second = await dash.logIn(linked.stdout.trim());
    expect((await second.api("GET", "/api/me")).body.profiles).toEqual(["default", "side"]);
    await dash.kill("SIGTERM");
    expect(dash.stderr).not.toContain(code);
    expect(dash.stderr).not.toContain(fresh);
    const families = await withStore(home, (s) => s.tokens.families());
    expect(families.map((f) => [f.label, f.scope, f.allProfiles])).toEqual([
      ["dashboard login", "admin", true],
      ["dashboard login", "admin", true],
    ]);
  });

  it("live updates of a profile reach only the streams whose login sees it", async () => {
    const { home, dash } = await setup();
    const operator = await dash.logIn();
    const side = await loginWithToken(dash, home, "side");
    const all = new SseReader();
    const one = new SseReader();
    try {
      expect(await all.open(dash.url("/api/events"), operator.cookie)).toBe(200);
      expect(await one.open(dash.url("/api/events"), side.cookie)).toBe(200);
      await until("both streams are ready", () =>
        [all, one].every((r) => r.events.some((e) => e.event === "ready")),
      );
      expect(one.events.find((e) => e.event === "ready")?.data.profiles).toEqual(["side"]);
      await session(home, "default", "news in default");
      await until("the operator hears of default", () =>
        all.events.some((e) => e.event === "change" && e.data.profile === "default"),
      );
      await session(home, "side", "news in side");
      await until("the side login hears of side", () =>
        one.events.some((e) => e.event === "change" && e.data.profile === "side"),
      );
      expect(one.events.filter((e) => JSON.stringify(e.data).includes('"default"'))).toEqual([]);
    } finally {
      all.close();
      one.close();
    }
  });
});

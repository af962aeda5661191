// The dashboard's part of the audit trail over real HTTP (a real dashboard
// process): a login, a delete, an archive, an export and a sweep are
// recorded as the browser's token family from its remote address;
// GET /api/audit lists them behind the same login as every route.
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { loginWithToken, startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";

afterEach(async () => {
  await stopDashboards();
  cleanupHomes();
});

async function sessions(home: string, n: number): Promise<string[]> {
  const store = await openStore({ home });
  try {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const s = await store.sessions.create({ title: `s${i}` });
      await store.messages.append(s.id, { role: "user", content: `hello ${i}` });
      ids.push(s.id);
    }
    return ids;
  } finally {
    await store.close();
  }
}

describe("dashboard audit trail", () => {
  it("records login, delete, archive, export and delete-empty as the browser's family; GET /api/audit lists them", async () => {
    const home = tempHome();
    const [a, b] = await sessions(home, 2);
    const dash = await startDashboard(home);
    expect((await fetch(dash.url("/api/audit"))).status).toBe(401);
    const browser = await dash.logIn();

    expect((await browser.api("DELETE", `/api/sessions/default/${a}`)).status).toBe(200);
    const patched = await browser.api("PATCH", `/api/sessions/default/${b}`, {
      body: { archived: true },
    });
    expect(patched.status).toBe(200);
    const exported = await browser.api("GET", `/api/sessions/default/${b}/export`);
    expect(exported.status).toBe(200);
    expect(String(exported.body)).toContain("hello 1");
    const swept = await browser.api("POST", "/api/maintenance/delete-empty", {
      body: { profile: "default" },
    });
    expect(swept.status).toBe(200);
    // A change without the CSRF token is refused and records nothing.
    expect(
      (await browser.api("DELETE", `/api/sessions/default/${b}`, { csrf: false })).status,
    ).toBe(403);

    const res = await browser.api("GET", "/api/audit");
    expect(res.status).toBe(200);
    const entries = res.body.entries as {
      profile: string;
      action: string;
      outcome: string;
      actor: { kind: string; id: string; via: string; address: string };
      targets: string[];
    }[];
    // The export's row is written when its stream ends: it may land after the sweep's (empty: no row).
    expect(entries.map((e) => e.action).sort()).toEqual(
      ["dashboard.login", "export", "session.archive", "session.delete"].sort(),
    );
    const family = entries.find((e) => e.action === "dashboard.login")!.actor.id;
    expect(family).toMatch(/\S/);
    for (const e of entries) {
      expect(e.profile).toBe("default");
      expect(e.outcome).toBe("ok");
      expect(e.actor).toEqual({
        kind: "token",
        id: family,
        via: "dashboard",
        address: expect.stringMatching(/127\.0\.0\.1$/),
      });
    }
    expect(entries.find((e) => e.action === "session.delete")!.targets).toEqual([a]);
    expect(entries.find((e) => e.action === "export")!.targets).toEqual([b]);

    // The same rows through the CLI, from the database.
    const cli = await runCli(["--json", "audit"], { home });
    expect(cli.json<{ entries: unknown[] }>().entries).toHaveLength(4);
    expect((await browser.api("GET", "/api/audit?limit=1")).body.entries).toHaveLength(1);
    expect((await browser.api("GET", "/api/audit?limit=x")).status).toBe(400);
  });

  it("GET /api/audit needs an admin login and shows only the profiles the login sees", async () => {
    const home = tempHome();
    const dash = await startDashboard(home, { profiles: ["default", "side"] });
    const operator = await dash.logIn();
    const chat = await loginWithToken(dash, home, "side", "chat");
    const refused = await chat.api("GET", "/api/audit");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "HEARTH_SCOPE_DENIED" });

    const admin = await loginWithToken(dash, home, "side", "admin");
    const own = (await admin.api("GET", "/api/audit")).body.entries as {
      profile: string;
      action: string;
      detail: Record<string, unknown> | null;
    }[];
    expect(new Set(own.map((e) => e.profile))).toEqual(new Set(["side"]));
    expect(own.filter((e) => e.action === "token.create").map((e) => e.detail?.scope)).toEqual([
      "admin",
      "chat",
    ]);
    expect(own.find((e) => e.action === "dashboard.login")?.detail).toEqual({
      scope: "admin",
      allProfiles: false,
    });
    const other = await admin.api("GET", "/api/audit?profile=default");
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: "HEARTH_PROFILE_DENIED" });

    // The operator's all-profiles link sees both profiles' trails.
    const all = (await operator.api("GET", "/api/audit")).body.entries as { profile: string }[];
    expect(new Set(all.map((e) => e.profile))).toEqual(new Set(["default", "side"]));
  });
});

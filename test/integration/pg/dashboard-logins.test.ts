/**
 * Dashboard logins shared through PostgreSQL: two homes (two "hosts") whose
 * configuration points at one database, each running its own dashboard as a
 * child process. A cookie (and its CSRF token) issued by A is accepted by B;
 * a logout on A, an expired login or a revoked token family is refused on B.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { Browser, startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { pgHome } from "./helpers.js";

afterEach(async () => {
  await stopDashboards();
});

async function sql(url: string, text: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}

describe.skipIf(!pgEnabled)("dashboard logins shared by the hosts of one database", () => {
  it("accepts A's cookie and CSRF token on B; a logout, an expiry or a revoked family is refused on B", async () => {
    const url = await freshPgDatabase();
    const homeA = pgHome(url);
    const homeB = pgHome(url);
    const store = await openStore({ home: homeA });
    const session = await store.sessions.create({ source: "web", title: "shared" });
    await store.close();
    const [a, b] = await Promise.all([startDashboard(homeA), startDashboard(homeB)]);

    const onA = await a.logIn();
    expect(onA.cookie.split("=")[0]).toBe("hearth_dashboard");
    const onB = new Browser(b, onA.cookie, onA.csrf);
    const me = await onB.api("GET", "/api/me");
    expect(me.status).toBe(200);
    expect(me.body.csrfToken).toBe(onA.csrf);
    // A change on B with A's CSRF token and B's own Origin is accepted…
    const renamed = await onB.api("PATCH", `/api/sessions/default/${session.id}`, {
      body: { title: "renamed on B" },
    });
    expect(renamed.status).toBe(200);
    // …and without the token refused.
    const forged = await onB.api("PATCH", `/api/sessions/default/${session.id}`, {
      body: { title: "forged" },
      csrf: false,
    });
    expect(forged.status).toBe(403);

    // Only the id's hash is stored, never the cookie value or the CSRF token.
    const rows = await sql(url, "SELECT * FROM dashboard_logins");
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(onA.cookie.split("=")[1]);
    expect(stored).not.toContain(onA.csrf);

    // Logout on A: refused on B.
    expect((await onA.api("POST", "/api/logout")).status).toBe(200);
    expect((await onB.api("GET", "/api/me")).status).toBe(401);
    expect((await onA.api("GET", "/api/me")).status).toBe(401);

    // Expired: refused on B.
    const second = await a.logIn(await freshLink(homeA, a.address));
    const secondOnB = new Browser(b, second.cookie, second.csrf);
    expect((await secondOnB.api("GET", "/api/me")).status).toBe(200);
    await sql(url, "UPDATE dashboard_logins SET expires_at = 1 WHERE revoked_at IS NULL");
    expect((await secondOnB.api("GET", "/api/me")).status).toBe(401);

    // A revoked token family: refused on B.
    const third = await a.logIn(await freshLink(homeA, a.address));
    const thirdOnB = new Browser(b, third.cookie, third.csrf);
    expect((await thirdOnB.api("GET", "/api/me")).status).toBe(200);
    const [live] = await sql(url, "SELECT family_id FROM dashboard_logins WHERE expires_at > 1");
    const writer = await openStore({ home: homeB });
    expect(await writer.tokens.revokeFamily(live.family_id, "test")).toBe(true);
    await writer.close();
    expect((await thirdOnB.api("GET", "/api/me")).status).toBe(401);
  });
});

/** A fresh login link to dashboard A: a pairing code of the profile, as `hearth token create` makes. */
async function freshLink(home: string, address: string): Promise<string> {
  const store = await openStore({ home });
  try {
    const { code } = await store.tokens.createPairing({
      label: "test",
      scope: "admin",
      ttlMs: 600_000,
    });
    return `${address}/login?token=${encodeURIComponent(code)}`;
  } finally {
    await store.close();
  }
}

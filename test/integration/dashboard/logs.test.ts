/**
 * GET /api/logs/dashboard: the dashboard's recent warn/error log events, for a login
 * with the admin scope only, in the fixed shape of docs/api.md (the Host a
 * refused request sent is not shown).
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  getWithHost,
  loginWithToken,
  startDashboard,
  stopDashboards,
} from "../../helpers/dashboard.js";
import { tempHome } from "../../helpers/home.js";

afterEach(stopDashboards);

describe("dashboard GET /api/logs/dashboard", () => {
  it("shows an admin login the recent warnings, refuses a read login and anonymous callers", async () => {
    const home = tempHome();
    const dash = await startDashboard(home);
    expect((await fetch(dash.url("/api/logs/dashboard"))).status).toBe(401);
    expect((await getWithHost(dash.address, "/v1/health", "rebound.example")).status).toBe(403);

    const reader = await loginWithToken(dash, home, "default", "read");
    const denied = await reader.api("GET", "/api/logs/dashboard");
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("HEARTH_SCOPE_DENIED");

    const admin = await loginWithToken(dash, home, "default", "admin");
    const shown = await admin.api("GET", "/api/logs/dashboard?level=warn");
    expect(shown.status).toBe(200);
    expect(shown.body.events).toContainEqual(
      expect.objectContaining({
        level: 40,
        levelName: "warn",
        proc: "dashboard",
        pid: dash.pid,
        event: "dashboard.host_refused",
      }),
    );
    expect(JSON.stringify(shown.body)).not.toContain("rebound.example");
    expect((await admin.api("GET", "/api/logs/dashboard?limit=0")).status).toBe(400);
  });
});

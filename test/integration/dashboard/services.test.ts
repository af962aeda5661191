/**
 * The Services page's API (issue 47): the gateway and scheduler of each
 * profile as their own records say (run/*.json, P1 liveness) and, for a
 * live gateway, its own /v1/ready and in-flight turns. Recent events come
 * from the processes' /v1/events when they have it; until then null.
 */
import { describe, expect, it } from "vitest";
import { startDashboard } from "../../helpers/dashboard.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

describe("dashboard services", () => {
  it("shows a running gateway up and ready, then down after kill -9; no scheduler yet", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const up = await browser.api("GET", "/api/services");
    expect(up.status).toBe(200);
    const p = up.body.profiles[0];
    expect(p.profile).toBe("default");
    expect(p.gateway).toMatchObject({ pid: gw.pid, up: true, ready: true, draining: false });
    expect(p.gateway.inFlight).toBe(0);
    expect(typeof p.gateway.since).toBe("string");
    expect(p.scheduler).toBeNull();
    // Recent events: the gateway's own GET /v1/events; a process without it (404 here)
    // is "not available", never an error of the page.
    const logs = await browser.api("GET", "/api/logs?level=error");
    expect(logs.status).toBe(200);
    expect(logs.body.level).toBe("error");
    expect(logs.body.sources).toHaveLength(1);
    expect(logs.body.sources[0]).toMatchObject({
      profile: "default",
      process: "gateway",
      pid: gw.pid,
    });
    expect(typeof logs.body.sources[0].available).toBe("boolean");
    expect(Array.isArray(logs.body.sources[0].events)).toBe(true);
    expect((await browser.api("GET", "/api/logs?level=debug")).status).toBe(400);
    await gw.kill("SIGKILL");
    const down = await browser.api("GET", "/api/services");
    expect(down.body.profiles[0].gateway).toMatchObject({ pid: gw.pid, up: false, ready: null });
  });
});

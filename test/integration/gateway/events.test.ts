/**
 * GET /v1/events: the gateway's recent warn/error log events over HTTP,
 * for an admin token only (a read token is refused, an anonymous caller
 * is asked to authenticate), in the fixed shape of docs/api.md: what a
 * refused request logged is there, the free-form fields it logged (the
 * caller's address, the Host it sent) are not.
 */
import { describe, expect, it } from "vitest";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { cleanUpAfterEach, hearth, raw } from "./security-fixture.js";

cleanUpAfterEach();

describe("gateway GET /v1/events", () => {
  it("shows an admin token the recent warnings, refuses other callers", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home);
    const token = async (scope: string) => {
      const created = await hearth(home, "--json", "token", "create", "--scope", scope);
      const { code } = JSON.parse(created.stdout) as { code: string };
      const pair = await raw(gw, "/v1/auth/pair?profile=default", { body: { code } });
      return { authorization: `Bearer ${pair.body.accessToken as string}` };
    };
    const admin = await token("admin");
    const reader = await token("read");

    const refused = await raw(gw, "/v1/health", { headers: { host: "rebound.example" } });
    expect(refused.status).toBe(403);

    expect((await raw(gw, "/v1/events")).status).toBe(401);
    const denied = await raw(gw, "/v1/events", { headers: reader });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("HEARTH_SCOPE_DENIED");

    const shown = await raw(gw, "/v1/events?level=warn", { headers: admin });
    expect(shown.status).toBe(200);
    expect(shown.body.events).toContainEqual({
      time: expect.any(String),
      level: 40,
      levelName: "warn",
      proc: "gateway",
      pid: gw.pid,
      event: "http.host_refused",
      msg: "request refused: unknown Host or Origin",
      code: null,
      profile: null,
    });
    expect(shown.text).not.toContain("rebound.example");
    expect((await raw(gw, "/v1/events?level=error", { headers: admin })).body.events).toEqual([]);
    const bad = await raw(gw, "/v1/events?level=chatty", { headers: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("HEARTH_BAD_REQUEST");
  });
});

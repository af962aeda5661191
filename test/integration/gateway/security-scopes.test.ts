import { describe, expect, it } from "vitest";
import { type GatewayChild, startGateway, withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { cleanUpAfterEach, hearth, raw } from "./security-fixture.js";

cleanUpAfterEach();

/** A pairing code of `profile` with `scope` (the CLI's default when none), traded for a pair at the gateway. */
async function pair(gw: GatewayChild, home: string, profile: string, scope?: string) {
  const args = ["--profile", profile, "--json", "token", "create"];
  if (scope) args.push("--scope", scope);
  const created = await hearth(home, ...args);
  expect(created.code).toBe(0);
  const { code } = JSON.parse(created.stdout) as { code: string };
  const answer = await raw(gw, `/v1/auth/pair?profile=${profile}`, { body: { code } });
  expect(answer.status).toBe(200);
  return answer.body as {
    accessToken: string;
    refreshToken: string;
    familyId: string;
    scope: string;
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const message = (content: string, profile: string) => ({
  platform: "cli",
  chat: "c",
  content,
  profile,
});

describe("gateway: a token is good for its own profile and scope only (security issue)", () => {
  it("another profile's token: 403 HEARTH_PROFILE_DENIED not naming its profile; health and metrics no worse than anonymous, metrics only its own series", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home, { profiles: ["default", "hushproject"] });
    const mine = await pair(gw, home, "default");
    const theirs = await pair(gw, home, "hushproject");
    expect(
      (
        await raw(gw, "/v1/messages", {
          body: message("hi", "default"),
          headers: bearer(mine.accessToken),
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await raw(gw, "/v1/messages", {
          body: message("hi", "hushproject"),
          headers: bearer(theirs.accessToken),
        })
      ).status,
    ).toBe(200);

    // (c) a valid token of another profile is told apart from an unknown one, without naming its profile.
    for (const path of ["/v1/sessions", "/v1/sessions?profile=default", "/v1/handoffs"]) {
      const denied = await raw(gw, path, { headers: bearer(theirs.accessToken) });
      expect(denied.status, path).toBe(403);
      expect(denied.body.error.code, path).toBe("HEARTH_PROFILE_DENIED");
      expect(denied.text, path).not.toContain("hushproject");
    }
    const sent = await raw(gw, "/v1/messages", {
      body: message("not mine", "default"),
      headers: bearer(theirs.accessToken),
    });
    expect(sent.status).toBe(403);
    expect(sent.body.error.code).toBe("HEARTH_PROFILE_DENIED");
    const forged = await raw(gw, "/v1/sessions", { headers: bearer("hat_forged") });
    expect([forged.status, forged.body.error.code]).toEqual([401, "HEARTH_UNAUTHORIZED"]);
    // Its own profile still works.
    const own = await raw(gw, "/v1/sessions?profile=hushproject", {
      headers: bearer(theirs.accessToken),
    });
    expect(own.status).toBe(200);
    expect(own.body.items).toHaveLength(1);
    // Nothing was written by the refused message.
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toHaveLength(1);

    // (a) health and metrics: a valid token of any profile gets what an anonymous caller gets, or more.
    expect((await raw(gw, "/v1/health")).status).toBe(200);
    for (const path of ["/v1/health", "/v1/health?profile=default"]) {
      const health = await raw(gw, path, { headers: bearer(theirs.accessToken) });
      expect(health.status, path).toBe(200);
      expect(health.body.status).toBe("ok");
    }
    // (b) metrics: a profile's token sees its own profile's series, never another's.
    for (const path of ["/metrics", "/metrics?profile=hushproject", "/metrics?profile=default"]) {
      const metrics = await raw(gw, path, { headers: bearer(theirs.accessToken) });
      expect(metrics.status, path).toBe(200);
      expect(metrics.text, path).toContain(
        'hearth_messages_acknowledged_total{profile="hushproject"',
      );
      expect(metrics.text, path).not.toContain('profile="default"');
      expect(metrics.text, path).toContain("hearth_process_cpu_seconds_total");
    }
    const ours = await raw(gw, "/metrics", { headers: bearer(mine.accessToken) });
    expect(ours.text).toContain('profile="default"');
    expect(ours.text).not.toContain('profile="hushproject"');
  });

  it("scopes: read lists but may not send, chat sends; a refresh keeps the scope; the refusal names both scopes", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home);
    const reader = await pair(gw, home, "default", "read");
    expect(reader.scope).toBe("read");
    expect((await raw(gw, "/v1/sessions", { headers: bearer(reader.accessToken) })).status).toBe(
      200,
    );
    const refused = await raw(gw, "/v1/messages", {
      body: message("may I?", "default"),
      headers: bearer(reader.accessToken),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: "HEARTH_SCOPE_DENIED",
      details: { needed: "chat", scope: "read" },
    });
    expect(refused.body.error.message).toContain("needs scope chat");
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);

    // A rotation keeps the family's scope.
    const rotated = await raw(gw, "/v1/auth/refresh", {
      body: { refreshToken: reader.refreshToken },
    });
    expect(rotated.body.scope).toBe("read");
    const again = await raw(gw, "/v1/messages", {
      body: message("now?", "default"),
      headers: bearer(rotated.body.accessToken),
    });
    expect(again.body.error.code).toBe("HEARTH_SCOPE_DENIED");

    const chatter = await pair(gw, home, "default");
    expect(chatter.scope).toBe("chat");
    const ok = await raw(gw, "/v1/messages", {
      body: message("hello", "default"),
      headers: bearer(chatter.accessToken),
    });
    expect(ok.status).toBe(200);
    // A permission request is listed with read and answered only with chat.
    const asks = `/v1/sessions/${ok.body.session.id}/permissions`;
    expect((await raw(gw, asks, { headers: bearer(reader.accessToken) })).status).toBe(200);
    const answered = await raw(gw, `${asks}/call_1`, {
      body: { decision: "allow_once" },
      headers: bearer(reader.accessToken),
    });
    expect(answered.body.error).toMatchObject({
      code: "HEARTH_SCOPE_DENIED",
      details: { needed: "chat", scope: "read" },
    });
    const unknown = await raw(gw, `${asks}/call_1`, {
      body: { decision: "allow_once" },
      headers: bearer(chatter.accessToken),
    });
    expect(unknown.body.error.code).toBe("HEARTH_PERMISSION_NOT_FOUND");
    const admin = await pair(gw, home, "default", "admin");
    expect((await raw(gw, "/v1/sessions", { headers: bearer(admin.accessToken) })).status).toBe(
      200,
    );

    const listed = await hearth(home, "--json", "token", "list");
    expect(
      (JSON.parse(listed.stdout) as { id: string; scope: string }[]).map((f) => [f.id, f.scope]),
    ).toEqual([
      [reader.familyId, "read"],
      [chatter.familyId, "chat"],
      [admin.familyId, "admin"],
    ]);
    const text = await hearth(home, "token", "list");
    expect(text.stdout).toContain(`${reader.familyId}  `);
    expect(text.stdout).toMatch(/ read {2}/);
    const bad = await hearth(home, "--json", "token", "create", "--scope", "root");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--scope must be read, chat, admin");
  });
});

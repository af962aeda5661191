import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGateway, withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { cleanUpAfterEach, hearth, RawConnection, raw, tokenCreate } from "./security-fixture.js";

cleanUpAfterEach();

describe("security (issue 11) against a real gateway: errors, authentication and names (items 11-17)", () => {
  it("answers framework-level errors in the documented shape (item 11)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const cases: [string, number, string][] = [
      [
        `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
        431,
        "HEARTH_HEADERS_TOO_LARGE",
      ],
      [
        `GET /v1/sessions?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
        431,
        "HEARTH_HEADERS_TOO_LARGE",
      ],
      [
        `GET /v1/sessions/${"a".repeat(500)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        414,
        "HEARTH_URL_TOO_LONG",
      ],
      [
        "GET /v1/sessions/%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        400,
        "HEARTH_BAD_REQUEST",
      ],
      ["FOO /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "HEARTH_BAD_REQUEST"],
      ["GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n", 403, "HEARTH_HOST_NOT_ALLOWED"],
      [
        "PROPFIND /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        404,
        "HEARTH_NOT_FOUND",
      ],
    ];
    for (const [request, status, code] of cases) {
      const conn = new RawConnection(gw);
      await conn.connected;
      conn.write(request);
      await until(`an answer to ${request.slice(0, 30)}`, () => conn.closed, 5_000);
      expect(conn.received.slice(0, 12), request.slice(0, 30)).toBe(`HTTP/1.1 ${status}`);
      expect(conn.body().error?.code, request.slice(0, 30)).toBe(code);
    }
  });

  it("logs failed authentication without the secret and rate-limits pair and refresh per address (item 12)", async () => {
    const home = tempHome();
    writeConfig(home, {
      gateway: { port: 0, requireAuth: true, authRateLimit: { burst: 3, perMinute: 1 } },
    });
    const gw = await startGateway(home);
    const guesses = ["GUESSAAAA1", "GUESSAAAA2", "GUESSAAAA3", "GUESSAAAA4", "GUESSAAAA5"];
    const answers = [];
    for (const code of guesses) answers.push(await raw(gw, "/v1/auth/pair", { body: { code } }));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429, 429]);
    expect(answers[3]!.body.error.code).toBe("HEARTH_RATE_LIMITED");
    expect(Number(answers[3]!.headers["retry-after"])).toBeGreaterThan(0);
    const refresh = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: "hrt_guess" } });
    expect(refresh.status).toBe(429);
    // A real code is refused too while the address is over the limit.
    const code = await tokenCreate(home);
    expect((await raw(gw, "/v1/auth/pair", { body: { code } })).status).toBe(429);

    expect(
      (
        await raw(gw, "/v1/sessions", {
          headers: { authorization: "Bearer hat_forged_token_value" },
        })
      ).status,
    ).toBe(401);
    await until("the failures are logged", () => gw.logEvents("auth.failed").length >= 4);
    const failures = gw.logEvents("auth.failed");
    expect(failures[0]).toMatchObject({ route: "/v1/auth/pair", ip: "127.0.0.1" });
    expect(failures.at(-1)).toMatchObject({ route: "/v1/sessions" });
    for (const secret of [...guesses, "hat_forged_token_value"])
      expect(gw.stderr).not.toContain(secret);
    expect(gw.logEvents("auth.rate_limited").length).toBeGreaterThanOrEqual(3);
  });

  it("tells unauthenticated callers nothing about the served profiles; /metrics needs a token unless public (item 13)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home, { profiles: ["default", "secretproject"] });
    const health = await raw(gw, "/v1/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    const answers = [
      await raw(gw, "/v1/sessions?profile=nope"),
      await raw(gw, "/v1/auth/pair", { body: { code: "ABCDEFGHJK", profile: "nope" } }),
      await raw(gw, "/v1/auth/refresh?profile=nope", { body: { refreshToken: "hrt_x" } }),
      await raw(gw, "/metrics"),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    for (const a of answers) expect(a.text).not.toContain("secretproject");

    // With a token, health says more, and a 404 may list what is served.
    const code = await tokenCreate(home);
    const pair = (await raw(gw, "/v1/auth/pair", { body: { code } })).body;
    const auth = { authorization: `Bearer ${pair.accessToken}` };
    expect((await raw(gw, "/v1/health", { headers: auth })).body.profiles).toEqual([
      "default",
      "secretproject",
    ]);
    expect((await raw(gw, "/metrics", { headers: auth })).status).toBe(200);
    await gw.kill("SIGTERM");

    writeConfig(home, { gateway: { port: 0, requireAuth: true, publicMetrics: true } });
    const open = await startGateway(home);
    expect((await raw(open, "/metrics")).status).toBe(200);
  });

  it("bounds profile names in query strings and auth bodies and never echoes a long one (item 14)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const long = "a".repeat(100_000);
    const answers = [
      await raw(gw, `/v1/sessions?profile=${"a".repeat(8_000)}`),
      await raw(gw, `/v1/handoffs?profile=${"b".repeat(65)}`),
      await raw(gw, "/v1/auth/pair", { body: { code: "ABCDEFGHJK", profile: long } }),
      await raw(gw, "/v1/auth/refresh", { body: { refreshToken: "hrt_x", profile: long } }),
      await raw(gw, "/v1/messages", {
        body: { platform: "p", chat: "c", content: "x", profile: long },
      }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body.error.code).toBe("HEARTH_BAD_REQUEST");
      expect(a.text.length).toBeLessThan(1_000);
    }
  });

  it("refuses lone surrogates and control characters in names; what is acknowledged is what is stored (item 15)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const bodies = [
      '{"platform":"p","chat":"c","content":"half \\ud83d a smile"}',
      '{"platform":"p","chat":"c","content":"\\udc00"}',
      '{"platform":"p\\u0000","chat":"c","content":"x"}',
      '{"platform":"p","chat":"c\\u0000d","content":"x"}',
      '{"platform":"p","chat":"c\\u001b[2J","content":"x"}',
      '{"platform":"p\\ud800","chat":"c","content":"x"}',
    ];
    for (const body of bodies) {
      const r = await raw(gw, "/v1/messages", { body });
      expect(r.status, body).toBe(400);
      expect(r.body.error.code).toBe("HEARTH_BAD_REQUEST");
    }
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);

    const content = "pair 😀, NUL \u0000 inside, tab\tand\nnewline";
    const ok = await raw(gw, "/v1/messages", { body: { platform: "p", chat: "c", content } });
    expect(ok.status).toBe(200);
    expect(ok.body.message.content).toBe(content);
    const stored = await withStore(home, (s) => s.messages.load(ok.body.session.id));
    expect(stored[0]!.content).toBe(content);
  });

  it("answers 401 to a refresh within the grace window once the family was revoked (item 16)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true, refreshGraceMs: 60_000 } });
    const gw = await startGateway(home);
    const code = await tokenCreate(home);
    const p0 = (await raw(gw, "/v1/auth/pair", { body: { code } })).body;
    const p1 = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } });
    expect(p1.status).toBe(200);
    // Within the grace window the same token still gets the same pair…
    expect(
      (await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } })).body,
    ).toEqual(p1.body);
    expect((await hearth(home, "token", "revoke", p0.familyId)).code).toBe(0);
    // …but not once the family is revoked.
    const late = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } });
    expect(late.status).toBe(401);
    expect(late.body.error.code).toBe("HEARTH_UNAUTHORIZED");
    expect(late.text).not.toContain(p1.body.accessToken);
  });

  it("validates every profile name before opening any store (item 17)", async () => {
    const home = tempHome();
    const r = await hearth(home, "gateway", "run", "--profiles", "ok,../../etc");
    expect(r.code).toBe(78); // a refusal a restart cannot fix
    expect(r.stderr).toContain("../../etc");
    expect(existsSync(join(home, "profiles", "ok", "state.db"))).toBe(false);
    expect(existsSync(join(home, "profiles", "ok"))).toBe(false);
  });
});

import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema, type HearthConfig } from "../../../src/config/schema.js";
import type { GatewayDeps, RouteContext } from "../../../src/gateway/gateway-deps.js";
import { registerHostGuard } from "../../../src/gateway/host-guard.js";
import { GatewayMetrics } from "../../../src/gateway/metrics.js";
import { registerProfileScope, runtimeResolver } from "../../../src/gateway/profile-scope.js";
import { registerErrorReplies } from "../../../src/gateway/route-errors.js";
import { registerHandoffRoutes } from "../../../src/gateway/routes/handoffs.js";
import { registerSessionRoutes } from "../../../src/gateway/routes/sessions.js";
import { openStore, type Store } from "../../../src/index.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { EchoResponder } from "../../../src/turn/responder.js";
import { tempHome } from "../../helpers/home.js";

/**
 * The gateway's route groups and hooks, each registered on a bare Fastify
 * instance (no gateway process, no listening socket) over a real store in
 * a temp home, and called with app.inject().
 */

let store: Store | undefined;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  await store?.close();
  app = undefined;
  store = undefined;
});

async function bare(config: HearthConfig = configSchema().parse({})) {
  const s = await openStore({ home: tempHome() });
  store = s;
  const deps: GatewayDeps = {
    runtimes: new Map([
      ["default", { profile: "default", store: s, committer: new GroupCommitter(s, false) }],
    ]),
    config: () => config,
    responder: () => new EchoResponder(),
    metrics: new GatewayMetrics(),
    shutdown: new AbortController().signal,
  };
  const served = [...deps.runtimes.keys()];
  const ctx: RouteContext = { deps, served, runtimeOf: runtimeResolver(deps, served) };
  const a = Fastify({ logger: false });
  app = a;
  a.decorateRequest("hearthProfile", "");
  a.decorateRequest("authProfile", undefined);
  registerErrorReplies(a, deps);
  return { app: a, store: s, deps, ctx };
}

describe("gateway route groups on a bare Fastify instance", () => {
  it("GET /v1/sessions: visible sessions by default, all=true adds archived and hidden, limit pages, above 500 is a 400", async () => {
    const { app, store, ctx } = await bare();
    registerProfileScope(app, "default");
    registerSessionRoutes(app, ctx);
    const a = await store.sessions.create({ source: "t" });
    await store.sessions.create({ source: "t" });
    const c = await store.sessions.create({ source: "t" });
    await store.sessions.setArchived(a.id, true);
    await store.sessions.setHidden(c.id, true);

    const list = async (q: string) => {
      const res = await app.inject({ method: "GET", url: `/v1/sessions${q}` });
      return { status: res.statusCode, body: res.json() };
    };
    expect((await list("")).body.items).toHaveLength(1);
    expect((await list("?all=true")).body.items).toHaveLength(3);
    const first = await list("?all=true&limit=2");
    expect(first.body.items).toHaveLength(2);
    const rest = await list(`?all=true&limit=2&cursor=${first.body.nextCursor}`);
    expect(rest.body.items).toHaveLength(1);
    const ids = [...first.body.items, ...rest.body.items].map((s: { id: string }) => s.id);
    expect(new Set(ids).size).toBe(3);

    const tooMany = await list("?limit=501");
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({
      code: "HEARTH_BAD_REQUEST",
      message: "bad request: querystring/limit must be at most 500",
    });
    expect((await list("?limit=0")).status).toBe(400);
  });

  it("GET /v1/sessions/:id streams the session and its transcript; an unknown id is 404", async () => {
    const { app, store, ctx } = await bare();
    registerProfileScope(app, "default");
    registerSessionRoutes(app, ctx);
    const s = await store.sessions.create({ source: "t" });
    await store.messages.append(s.id, { role: "user", content: "hello" });
    const res = await app.inject({ method: "GET", url: `/v1/sessions/${s.id}` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ profile: "default", session: { id: s.id } });
    expect(body.messages.map((m: { content: string }) => m.content)).toEqual(["hello"]);
    const missing = await app.inject({ method: "GET", url: "/v1/sessions/nope" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe("HEARTH_SESSION_NOT_FOUND");
  });

  it("GET /v1/handoffs answers completed by default and refuses an unknown state", async () => {
    const { app, ctx } = await bare();
    registerProfileScope(app, "default");
    registerHandoffRoutes(app, ctx);
    const res = await app.inject({ method: "GET", url: "/v1/handoffs" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ profile: "default", sessions: [] });
    const bad = await app.inject({ method: "GET", url: "/v1/handoffs?state=lost" });
    expect(bad.statusCode).toBe(400);
  });

  it("one profile per request: query and body must agree, a token is good for its own profile only, an unserved profile is 404", async () => {
    const { app, ctx } = await bare();
    app.addHook("onRequest", async (request) => {
      const token = request.headers["x-test-token-profile"];
      if (typeof token === "string") request.authProfile = token;
    });
    registerProfileScope(app, "default");
    app.post("/echo", async (request) => ({
      profile: request.hearthProfile,
      runtime: ctx.runtimeOf(request).profile,
    }));
    const post = (url: string, body: object, headers: Record<string, string> = {}) =>
      app.inject({ method: "POST", url, payload: body, headers });

    expect((await post("/echo", {})).json()).toEqual({ profile: "default", runtime: "default" });
    const disagree = await post("/echo?profile=default", { profile: "other" });
    expect(disagree.statusCode).toBe(400);
    expect(disagree.json().error.message).toBe(
      'bad request: "profile" in the query string and in the body disagree',
    );
    const foreign = await post("/echo", {}, { "x-test-token-profile": "work" });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error.code).toBe("HEARTH_PROFILE_DENIED");
    const unserved = await post("/echo", { profile: "work" });
    expect(unserved.statusCode).toBe(404);
    expect(unserved.json().error).toMatchObject({
      code: "HEARTH_NOT_FOUND",
      hint: "served: default",
    });
  });

  it("an unserved profile's hint names the served ones only to a caller allowed in", async () => {
    const config = configSchema().parse({ gateway: { requireAuth: true } });
    const { app, ctx } = await bare(config);
    registerProfileScope(app, "default");
    app.post("/echo", async (request) => ctx.runtimeOf(request).profile);
    const res = await app.inject({ method: "POST", url: "/echo", payload: { profile: "work" } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.hint).toBeUndefined();
  });

  it("the host guard refuses an unknown Host (403) and a malformed profile before any handler", async () => {
    const config = configSchema().parse({ gateway: { host: "127.0.0.1", port: 0 } });
    const { app, deps } = await bare(config);
    registerHostGuard(app, deps.config);
    let handled = 0;
    app.get("/ok", async () => {
      handled++;
      return { ok: true };
    });
    const get = (url: string, host: string) =>
      app.inject({ method: "GET", url, headers: { host } });
    expect((await get("/ok", "127.0.0.1:8080")).statusCode).toBe(200);
    const rebound = await get("/ok", "evil.example");
    expect(rebound.statusCode).toBe(403);
    expect(rebound.json().error.code).toBe("HEARTH_HOST_NOT_ALLOWED");
    const badProfile = await get("/ok?profile=../etc", "127.0.0.1:8080");
    expect(badProfile.statusCode).toBe(400);
    expect(handled).toBe(1);
    expect(await deps.metrics.registry.getSingleMetricAsString("hearth_http_errors_total")).toMatch(
      /code="HEARTH_HOST_NOT_ALLOWED"\} 1/,
    );
  });
});

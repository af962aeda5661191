import type { FastifyInstance } from "fastify";
import { Readiness, readyAnswer } from "../../http/readiness.js";
import { eventsAnswer } from "../../log/events.js";
import type { RouteContext } from "../gateway-deps.js";
import { onlyProfile } from "../metrics.js";

/**
 * GET /v1/health (liveness: the process answers; 200 while it runs),
 * GET /v1/ready (readiness: a write would succeed now; 200 or 503 with the
 * reasons), both open to anonymous callers, who learn no profile names;
 * GET /v1/events (recent warn/error log events, admin scope);
 * and GET /metrics (Prometheus text). A caller let in by its token (not by
 * gateway.publicMetrics) sees only its own profile's series, and those
 * without a profile label.
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { deps, served } = ctx;
  const readiness = new Readiness({
    stores: () => [...deps.runtimes.values()].map((r) => r.store),
    draining: () => deps.draining?.aborted === true,
  });
  const anonymous = (request: { authProfile: string | undefined }) =>
    deps.config().gateway.requireAuth && request.authProfile === undefined;

  app.get("/v1/health", async (request) => {
    if (anonymous(request)) return { status: "ok" };
    const report = readiness.latest();
    return {
      status: "ok",
      pid: process.pid,
      profiles: served,
      responder: deps.responder().name,
      uptimeMs: Math.round(process.uptime() * 1000),
      // Information, not a verdict: /v1/ready is the verdict.
      ready: report === undefined ? null : report.status === "ready",
      stores: report?.stores ?? [],
    };
  });

  app.get("/v1/ready", async (request, reply) => {
    const answer = await readyAnswer(readiness, !anonymous(request));
    if (answer.retryAfter !== undefined)
      void reply.header("retry-after", String(answer.retryAfter));
    return reply.status(answer.status).send(answer.body);
  });

  // The gateway's recent warn/error events (docs/api.md); the admin scope
  // (route-scopes.ts); a token sees events about its own profile, and those about none.
  app.get<{ Querystring: { level?: string; limit?: string } }>("/v1/events", async (request) => {
    const own = request.authProfile;
    if (!deps.events) return { events: [] };
    return eventsAnswer(
      deps.events,
      request.query,
      (e) => own === undefined || e.profile === null || e.profile === own,
    );
  });

  app.get("/metrics", async (request, reply) => {
    void reply.header("content-type", deps.metrics.registry.contentType);
    const text = await deps.metrics.registry.metrics();
    const own = deps.config().gateway.publicMetrics ? undefined : request.authProfile;
    return own === undefined ? text : onlyProfile(text, own);
  });
}

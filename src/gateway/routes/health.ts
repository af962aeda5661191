import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../gateway-deps.js";
import { onlyProfile } from "../metrics.js";

/**
 * GET /v1/health (behind auth, an anonymous caller learns only that the
 * gateway is up) and GET /metrics (Prometheus text). A caller let in by
 * its token (not by gateway.publicMetrics) sees only its own profile's
 * series, and those without a profile label.
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { deps, served } = ctx;
  app.get("/v1/health", async (request) => {
    if (deps.config().gateway.requireAuth && request.authProfile === undefined)
      return { status: "ok" };
    return {
      status: "ok",
      pid: process.pid,
      profiles: served,
      responder: deps.responder().name,
      uptimeMs: Math.round(process.uptime() * 1000),
    };
  });

  app.get("/metrics", async (request, reply) => {
    void reply.header("content-type", deps.metrics.registry.contentType);
    const text = await deps.metrics.registry.metrics();
    const own = deps.config().gateway.publicMetrics ? undefined : request.authProfile;
    return own === undefined ? text : onlyProfile(text, own);
  });
}

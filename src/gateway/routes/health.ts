import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../gateway-deps.js";

/**
 * GET /v1/health (behind auth, an anonymous caller learns only that the
 * gateway is up) and GET /metrics (Prometheus text).
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

  app.get("/metrics", async (_request, reply) => {
    void reply.header("content-type", deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}

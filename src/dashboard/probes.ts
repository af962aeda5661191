import type { FastifyInstance } from "fastify";
import { Readiness, readyAnswer } from "../http/readiness.js";
import type { ProfileStores } from "./profiles.js";

/**
 * GET /v1/health (liveness) and GET /v1/ready (readiness: every served
 * store answers now), the same two probes as the gateway's, without a login:
 * a balancer carries no cookie. Only a logged-in browser learns profile
 * names and the per-store details.
 */
export function registerProbeRoutes(app: FastifyInstance, deps: { stores: ProfileStores }): void {
  const readiness = new Readiness({ stores: () => deps.stores.stores });

  app.get("/v1/health", async (request) => {
    if (!request.browser) return { status: "ok" };
    const report = readiness.latest();
    return {
      status: "ok",
      pid: process.pid,
      profiles: deps.stores.profiles,
      uptimeMs: Math.round(process.uptime() * 1000),
      ready: report === undefined ? null : report.status === "ready",
      stores: report?.stores ?? [],
    };
  });

  app.get("/v1/ready", async (request, reply) => {
    const answer = await readyAnswer(readiness, request.browser !== undefined);
    if (answer.retryAfter !== undefined)
      void reply.header("retry-after", String(answer.retryAfter));
    return reply.status(answer.status).send(answer.body);
  });
}

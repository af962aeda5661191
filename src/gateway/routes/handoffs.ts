import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../gateway-deps.js";
import { query } from "../message-body.js";

/** GET /v1/handoffs: the request's profile's sessions handed over to the gateway, by state (completed by default). */
export function registerHandoffRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { runtimeOf } = ctx;
  app.get<{
    Querystring: { profile?: string; state?: "pending" | "running" | "completed" | "failed" };
  }>(
    "/v1/handoffs",
    {
      schema: {
        querystring: query({
          state: { type: "string", enum: ["pending", "running", "completed", "failed"] },
        }),
      },
    },
    async (request) => {
      const runtime = runtimeOf(request);
      return {
        profile: runtime.profile,
        sessions: await runtime.store.handoffs.list(request.query.state ?? "completed"),
      };
    },
  );
}

import type { FastifyInstance } from "fastify";
import { eventsAnswer } from "../log/events.js";
import type { EventRing } from "../log/ring.js";

/**
 * GET /api/logs/dashboard?level=warn|error|fatal&limit=N: the dashboard's own
 * recent warn/error log events (docs/api.md), for a login with the admin
 * scope (route-scopes.ts); a login of one profile sees events about that
 * profile and those about none.
 */
export function registerEventRoutes(app: FastifyInstance, events: EventRing): void {
  app.get<{ Querystring: { level?: string; limit?: string } }>(
    "/api/logs/dashboard",
    async (request) => {
      const login = request.browser;
      return eventsAnswer(
        events,
        request.query,
        (e) => login?.allProfiles === true || e.profile === null || e.profile === login?.profile,
      );
    },
  );
}

import type { FastifyInstance } from "fastify";
import { storesOf } from "../profiles.js";
import { FLAG, LIMIT, MAX_LIMIT, PROFILE } from "./schemas.js";
import { profilesOf } from "./scope.js";

/** GET /api/search: full-text search over one profile or every served one, each hit with its session. */
export function registerSearchRoutes(app: FastifyInstance): void {
  app.get<{
    Querystring: { q: string; profile?: string; history?: "true" | "false"; limit?: string };
  }>(
    "/api/search",
    {
      schema: {
        querystring: {
          type: "object",
          required: ["q"],
          additionalProperties: false,
          properties: {
            q: { type: "string", maxLength: 500 },
            profile: PROFILE,
            history: FLAG,
            limit: LIMIT,
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { q, history } = request.query;
      const limit = Math.min(Number(request.query.limit ?? 50), MAX_LIMIT);
      const items = [];
      for (const profile of profilesOf(stores, request.query.profile)) {
        const store = stores.reader(profile);
        // The store's hits carry their session's title and source: no second lookup here.
        const hits = await store.search(q, { limit, includeHistory: history === "true" });
        for (const hit of hits) {
          items.push({
            profile,
            ...hit,
            session: hit.session ? { id: hit.sessionId, ...hit.session } : null,
          });
        }
      }
      return { items: items.slice(0, limit) };
    },
  );
}

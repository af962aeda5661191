import type { FastifyInstance } from "fastify";
import { storesOf } from "../profiles.js";
import { FLAG, LIMIT, MAX_LIMIT, PROFILE } from "./schemas.js";
import { profilesOf } from "./scope.js";

/** The most hits one search pages through (the store ranks at most 500 per profile). */
export const MAX_SEARCH_HITS = 500;
/**
 * The marks around each match in a snippet: private-use characters, so a
 * `[` or `]` in a message is never taken for one (the page splits on them).
 */
export const MARKS: [string, string] = ["\uE000", "\uE001"];

/**
 * GET /api/search: full-text search over one profile or every served one,
 * each hit with its profile and session; paged by `offset` (profiles in
 * order, each one's hits best first), `nextOffset` null at the end.
 */
export function registerSearchRoutes(app: FastifyInstance): void {
  app.get<{
    Querystring: {
      q: string;
      profile?: string;
      history?: "true" | "false";
      limit?: string;
      offset?: string;
    };
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
            offset: { type: "string", pattern: "^[0-9]{1,3}$" },
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { q, history } = request.query;
      const limit = Math.min(Number(request.query.limit ?? 50), MAX_LIMIT);
      const offset = Math.min(Number(request.query.offset ?? 0), MAX_SEARCH_HITS);
      const wanted = Math.min(offset + limit + 1, MAX_SEARCH_HITS);
      const items = [];
      for (const profile of profilesOf(stores, request.query.profile)) {
        if (items.length >= wanted) break;
        const store = stores.reader(profile);
        // The store's hits carry their session's title and source: no second lookup here.
        const hits = await store.search(q, {
          limit: wanted,
          includeHistory: history === "true",
          marks: MARKS,
        });
        for (const hit of hits) {
          items.push({
            profile,
            ...hit,
            session: hit.session ? { id: hit.sessionId, ...hit.session } : null,
          });
        }
      }
      const end = Math.min(offset + limit, MAX_SEARCH_HITS);
      return {
        items: items.slice(offset, end),
        offset,
        nextOffset: items.length > end ? end : null,
        marks: MARKS,
      };
    },
  );
}

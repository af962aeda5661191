import type { FastifyInstance } from "fastify";
import { storesOf } from "../profiles.js";
import { FLAG, LIMIT, MAX_LIMIT, params } from "./schemas.js";

/** One session (with its parent and children) and its transcript, a page at a time, newest first. */
export function registerSessionDetailRoutes(app: FastifyInstance): void {
  app.get<{ Params: { profile: string; id: string } }>(
    "/api/sessions/:profile/:id",
    { schema: { params } },
    async (request) => {
      const stores = storesOf(request);
      const { profile, id } = request.params;
      const store = stores.reader(profile);
      const session = await store.sessions.require(id);
      const parent = session.parentId ? await store.sessions.get(session.parentId) : null;
      const children = await store.browse.children(id);
      return { profile, session, parent, children };
    },
  );

  app.get<{
    Params: { profile: string; id: string };
    Querystring: { before?: string; limit?: string; history?: "true" | "false" };
  }>(
    "/api/sessions/:profile/:id/messages",
    {
      schema: {
        params,
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            before: { type: "string", pattern: "^[0-9]{1,15}$" },
            limit: LIMIT,
            history: FLAG,
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { profile, id } = request.params;
      const limit = Math.min(Number(request.query.limit ?? 100), MAX_LIMIT);
      const items = await stores.reader(profile).browse.transcript(id, {
        limit,
        includeHistory: request.query.history === "true",
        ...(request.query.before ? { before: Number(request.query.before) } : {}),
      });
      const oldest = items[items.length - 1];
      return { items, nextBefore: items.length === limit && oldest ? oldest.ordinal : null };
    },
  );
}

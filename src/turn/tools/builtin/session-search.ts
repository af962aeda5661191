import type { Tool } from "../types.js";
import { searchFilter, sessionFilter } from "./session-scope.js";

/** Full-text search over this chat's history (or the profile's, by tools.sessionScope): snippets with their sessions' titles. */
export const sessionSearch: Tool = {
  name: "session_search",
  description:
    "Search past conversations of this chat (full text). Returns matching snippets, each with its session id and title; read more with session_read.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", description: "words to look for" },
      limit: { type: "integer", minimum: 1, maximum: 50, description: "at most this many hits" },
    },
    required: ["query"],
    additionalProperties: false,
  },
  idempotent: true,
  async run(args, ctx) {
    if (typeof args.query !== "string" || args.query.trim() === "")
      throw new TypeError("query must be a non-empty string");
    const max = Number(ctx.settings.maxHits ?? 20);
    const limit = Math.min(max, Number.isInteger(args.limit) ? Number(args.limit) : 10);
    const scope = searchFilter(await sessionFilter(ctx));
    const hits = await ctx.store.search(args.query, { ...scope, limit: Math.max(1, limit) });
    return hits.map((h) => ({
      sessionId: h.sessionId,
      title: h.session?.title ?? null,
      ordinal: h.ordinal,
      role: h.role,
      snippet: h.snippet,
      at: new Date(h.createdAt).toISOString(),
    }));
  },
};

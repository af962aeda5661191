import type { FastifyInstance } from "fastify";
import { SESSION_STATES, type SessionState } from "../../store/browse.js";
import type { Session } from "../../store/types.js";
import { storesOf } from "../profiles.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { LIMIT, MAX_LIMIT, PROFILE } from "./schemas.js";
import { profilesOf } from "./scope.js";

type Row = Session & { profile: string };

/** GET /api/sessions (filters, keyset pages across profiles) and GET /api/platforms. */
export function registerSessionListRoutes(app: FastifyInstance): void {
  app.get<{
    Querystring: {
      profile?: string;
      platform?: string;
      state?: SessionState;
      q?: string;
      cursor?: string;
      limit?: string;
      since?: string;
    };
  }>(
    "/api/sessions",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            profile: PROFILE,
            platform: { type: "string", maxLength: 64 },
            state: { type: "string", enum: [...SESSION_STATES] },
            q: { type: "string", maxLength: 200 },
            cursor: { type: "string", maxLength: 400 },
            limit: LIMIT,
            since: { type: "string", pattern: "^[0-9]{1,15}$" },
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const q = request.query;
      const limit = Math.min(Number(q.limit ?? 50), MAX_LIMIT);
      const after = q.cursor ? decodeCursor(q.cursor) : undefined;
      // One keyset over every profile: (lastActivityAt, id) orders sessions of
      // all stores alike, so each store gives its next limit+1 and the merge
      // keeps the first limit.
      const rows: Row[] = [];
      for (const profile of profilesOf(stores, q.profile)) {
        const page = await stores.reader(profile).browse.sessions({
          limit: limit + 1,
          state: q.state ?? "visible",
          ...(q.platform ? { source: q.platform } : {}),
          ...(q.q ? { text: q.q } : {}),
          ...(q.since ? { activeSince: Number(q.since) } : {}),
          ...(after ? { after } : {}),
        });
        for (const s of page) rows.push({ ...s, profile });
      }
      rows.sort(
        (a, b) => b.lastActivityAt - a.lastActivityAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      );
      const items = rows.slice(0, limit);
      const last = rows.length > limit ? items[items.length - 1] : undefined;
      return { items, nextCursor: last ? encodeCursor(last.lastActivityAt, last.id) : null };
    },
  );

  app.get("/api/platforms", async (request) => {
    const stores = storesOf(request);
    const all = new Set<string>();
    for (const p of stores.profiles)
      for (const s of await stores.reader(p).browse.platforms()) all.add(s);
    return { platforms: [...all].sort() };
  });
}

import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { SESSION_STATES, type SessionState } from "../store/browse.js";
import type { Session } from "../store/types.js";
import type { ProfileStores } from "./profiles.js";

const MAX_LIMIT = 200;
const ID = { type: "string", minLength: 1, maxLength: 200 } as const;
const PROFILE = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]{0,63}$" } as const;
const FLAG = { type: "string", enum: ["true", "false"] } as const;
const LIMIT = { type: "string", pattern: "^[1-9][0-9]{0,2}$" } as const;
const params = {
  type: "object",
  required: ["profile", "id"],
  properties: { profile: PROFILE, id: ID },
} as const;

type Row = Session & { profile: string };

export interface SessionRoutesDeps {
  stores: ProfileStores;
}

/** Sessions: the list (filters, keyset pages across profiles), one session, its transcript, changes, export, search. */
export function registerSessionRoutes(app: FastifyInstance, deps: SessionRoutesDeps): void {
  const { stores } = deps;
  const profilesOf = (profile: string | undefined) =>
    profile ? [stores.reader(profile).profile] : stores.profiles;

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
      const q = request.query;
      const limit = Math.min(Number(q.limit ?? 50), MAX_LIMIT);
      const after = q.cursor ? decodeCursor(q.cursor) : undefined;
      // One keyset over every profile: (lastActivityAt, id) orders sessions of
      // all stores alike, so each store gives its next limit+1 and the merge
      // keeps the first limit.
      const rows: Row[] = [];
      for (const profile of profilesOf(q.profile)) {
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

  app.get("/api/platforms", async () => {
    const all = new Set<string>();
    for (const p of stores.profiles)
      for (const s of await stores.reader(p).browse.platforms()) all.add(s);
    return { platforms: [...all].sort() };
  });

  app.get<{ Params: { profile: string; id: string } }>(
    "/api/sessions/:profile/:id",
    { schema: { params } },
    async (request) => {
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

  app.get<{
    Params: { profile: string; id: string };
    Querystring: { format?: "jsonl" | "markdown" };
  }>(
    "/api/sessions/:profile/:id/export",
    {
      schema: {
        params,
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { format: { type: "string", enum: ["jsonl", "markdown"] } },
        },
      },
    },
    async (request, reply) => {
      const { profile, id } = request.params;
      const format = request.query.format ?? "jsonl";
      const store = stores.reader(profile);
      await store.sessions.require(id);
      const safeId = id.replace(/[^A-Za-z0-9_-]/g, "_");
      void reply
        .header(
          "content-type",
          format === "jsonl"
            ? "application/x-ndjson; charset=utf-8"
            : "text/markdown; charset=utf-8",
        )
        .header(
          "content-disposition",
          `attachment; filename="session-${safeId}.${format === "jsonl" ? "jsonl" : "md"}"`,
        );
      return reply.send(Readable.from(store.export({ format, sessionIds: [id] })));
    },
  );

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
      const { q, history } = request.query;
      const limit = Math.min(Number(request.query.limit ?? 50), MAX_LIMIT);
      const items = [];
      for (const profile of profilesOf(request.query.profile)) {
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

  // Changes: ordinary row writes through a writer opened for the one write.
  app.patch<{
    Params: { profile: string; id: string };
    Body: { title?: string | null; pinned?: boolean; archived?: boolean; hidden?: boolean };
  }>(
    "/api/sessions/:profile/:id",
    {
      schema: {
        params,
        body: {
          type: "object",
          additionalProperties: false,
          minProperties: 1,
          properties: {
            title: { type: ["string", "null"], maxLength: 200 },
            pinned: { type: "boolean" },
            archived: { type: "boolean" },
            hidden: { type: "boolean" },
          },
        },
      },
    },
    async (request) => {
      const { profile, id } = request.params;
      const body = request.body;
      const session = await stores.withWriter(profile, async (store) => {
        let s = await store.sessions.require(id);
        if (body.title !== undefined) s = await store.sessions.rename(id, body.title, "user");
        if (body.pinned !== undefined) s = await store.sessions.setPinned(id, body.pinned);
        if (body.archived !== undefined) s = await store.sessions.setArchived(id, body.archived);
        if (body.hidden !== undefined) s = await store.sessions.setHidden(id, body.hidden);
        return s;
      });
      request.log.info(
        { event: "dashboard.session_changed", profile, id, change: Object.keys(body) },
        "session changed",
      );
      return { profile, session };
    },
  );

  app.delete<{ Params: { profile: string; id: string } }>(
    "/api/sessions/:profile/:id",
    { schema: { params } },
    async (request) => {
      const { profile, id } = request.params;
      await stores.reader(profile).sessions.require(id);
      const deleted = await stores.withWriter(profile, (store) => store.sessions.delete(id));
      request.log.info({ event: "dashboard.session_deleted", profile, id }, "session deleted");
      return { profile, id, deleted };
    },
  );

  app.post<{
    Body: { action: "archive" | "unarchive"; sessions: { profile: string; id: string }[] };
  }>(
    "/api/sessions/bulk",
    {
      schema: {
        body: {
          type: "object",
          required: ["action", "sessions"],
          additionalProperties: false,
          properties: {
            action: { type: "string", enum: ["archive", "unarchive"] },
            sessions: { type: "array", minItems: 1, maxItems: 500, items: params },
          },
        },
      },
    },
    async (request) => {
      const { action, sessions } = request.body;
      const done: { profile: string; id: string }[] = [];
      const failed: { profile: string; id: string; error: unknown }[] = [];
      for (const profile of new Set(sessions.map((s) => s.profile))) {
        await stores.withWriter(profile, async (store) => {
          for (const s of sessions.filter((x) => x.profile === profile)) {
            try {
              await store.sessions.setArchived(s.id, action === "archive");
              done.push(s);
            } catch (err) {
              failed.push({
                ...s,
                error: (err as { toJSON?: () => unknown }).toJSON?.() ?? String(err),
              });
            }
          }
        });
      }
      return { done, failed };
    },
  );

  app.post<{ Body: { profile: string; dryRun?: boolean } }>(
    "/api/maintenance/delete-empty",
    {
      schema: {
        body: {
          type: "object",
          required: ["profile"],
          additionalProperties: false,
          properties: { profile: PROFILE, dryRun: { type: "boolean" } },
        },
      },
    },
    async (request) => {
      const { profile, dryRun } = request.body;
      const ids = dryRun
        ? await stores.reader(profile).sessions.deleteEmpty({ dryRun: true })
        : await stores.withWriter(profile, (store) => store.sessions.deleteEmpty());
      return { profile, dryRun: dryRun === true, deleted: ids };
    },
  );
}

function encodeCursor(lastActivityAt: number, id: string): string {
  return Buffer.from(JSON.stringify([lastActivityAt, id])).toString("base64url");
}

function decodeCursor(cursor: string): { lastActivityAt: number; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      Number.isSafeInteger(v[0]) &&
      typeof v[1] === "string"
    ) {
      return { lastActivityAt: v[0] as number, id: v[1] };
    }
  } catch {
    // fall through
  }
  throw new RangeError("cursor is not one this dashboard returned");
}

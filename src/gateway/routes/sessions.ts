import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../gateway-deps.js";
import { FLAG, query } from "../message-body.js";
import { sendTranscript } from "../response-parts.js";

/** Sessions of the request's profile: GET /v1/sessions (one page) and GET /v1/sessions/:id (with its transcript). */
export function registerSessionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { runtimeOf } = ctx;
  app.get<{
    Querystring: { profile?: string; limit?: string; cursor?: string; all?: "true" | "false" };
  }>(
    "/v1/sessions",
    {
      schema: {
        querystring: query({
          limit: { type: "string", pattern: "^(?:[1-9][0-9]{0,2})$" },
          cursor: { type: "string", maxLength: 512 },
          all: FLAG,
        }),
      },
    },
    async (request) => {
      const q = request.query;
      const runtime = runtimeOf(request);
      const limit = q.limit === undefined ? 50 : Number(q.limit);
      if (limit > 500) throw new RangeError("querystring/limit must be at most 500");
      return runtime.store.sessions.list({
        limit,
        includeArchived: q.all === "true",
        includeHidden: q.all === "true",
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.get<{
    Params: { id: string };
    Querystring: { profile?: string; history?: "true" | "false" };
  }>(
    "/v1/sessions/:id",
    {
      schema: {
        querystring: query({ history: FLAG }),
      },
    },
    async (request, reply) => {
      const runtime = runtimeOf(request);
      const session = await runtime.store.sessions.require(request.params.id);
      // The transcript's JSON is built on a reader thread a part (~1 MiB) at
      // a time, each part asked for when the socket has taken the last one
      // and handed back to the thread once written: a 100,000-message
      // session never holds the loop that serves turns for long, and its
      // bytes never pile up on this thread's heap.
      const parts = await runtime.store.messages.loadJsonParts(session.id, {
        includeHistory: request.query.history === "true",
      });
      const head = JSON.stringify({ profile: runtime.profile, session });
      reply.hijack();
      await sendTranscript(reply.raw, `${head.slice(0, -1)},"messages":`, parts);
      return reply;
    },
  );
}

import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { storesOf } from "../profiles.js";
import { params } from "./schemas.js";

/** GET /api/sessions/:profile/:id/export: the session as a JSONL or Markdown attachment, streamed. */
export function registerSessionExportRoutes(app: FastifyInstance): void {
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
      const stores = storesOf(request);
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
}

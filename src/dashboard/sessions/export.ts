import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { isHearthError } from "../../errors.js";
import type { AuditInput } from "../../store/audit.js";
import { browserActor } from "../api-audit.js";
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
      const record = (input: Omit<AuditInput, "action" | "actor" | "targets">) =>
        stores
          .withWriter(profile, (writer) =>
            writer.audit.record({
              action: "export",
              actor: browserActor(request),
              targets: [id],
              ...input,
            }),
          )
          .catch((err: unknown) =>
            request.log.error({ event: "dashboard.audit_failed", err }, "export not audited"),
          );
      return reply.send(
        Readable.from(recorded(store.export({ format, sessionIds: [id] }), format, record)),
      );
    },
  );
}

/**
 * The export's chunks, then its audit row: "ok" once the last chunk was
 * handed over, "failed" when the export threw or the browser went away
 * part-way (docs/security.md#audit-trail).
 */
async function* recorded(
  chunks: AsyncGenerator<string>,
  format: string,
  record: (input: Omit<AuditInput, "action" | "actor" | "targets">) => Promise<unknown>,
): AsyncGenerator<string> {
  let error: string | undefined = "aborted";
  try {
    yield* chunks;
    error = undefined;
  } catch (err) {
    error = isHearthError(err) ? err.code : "HEARTH_INTERNAL";
    throw err;
  } finally {
    await record(
      error === undefined
        ? { detail: { format } }
        : { outcome: "failed", detail: { format, error } },
    );
  }
}

import type { FastifyInstance } from "fastify";
import { HearthError } from "../errors.js";
import type { GatewayDeps } from "./gateway-deps.js";
import {
  fromRequestError,
  publicError,
  retryAfterSeconds,
  STATUS,
  truncate,
} from "./http-errors.js";

/**
 * Every error a route throws, and every unknown route, answered in the
 * documented shape `{ error: HearthError JSON }` with its status, counted
 * in hearth_http_errors_total. A generation change (F3) is repaired here,
 * once: the request that met it wrote nothing acknowledged.
 */
export function registerErrorReplies(
  app: FastifyInstance,
  deps: Pick<GatewayDeps, "metrics" | "recover">,
): void {
  app.setErrorHandler(async (err, request, reply) => {
    const error = fromRequestError(err);
    const status = STATUS[error.code] ?? 500;
    deps.metrics.errors.inc({ code: error.code });
    const recovered = await deps.recover?.(error);
    if (!recovered && status >= 500) request.log.error({ err, code: error.code }, "request failed");
    const retryAfter = recovered ? 0 : retryAfterSeconds(error);
    if (retryAfter !== undefined) void reply.header("retry-after", String(retryAfter));
    return reply.status(status).send({ error: publicError(error, status) });
  });
  app.setNotFoundHandler((request, reply) => {
    deps.metrics.errors.inc({ code: "HEARTH_NOT_FOUND" });
    void reply.status(404).send({
      error: new HearthError(
        "HEARTH_NOT_FOUND",
        `no route ${request.method} ${truncate(request.url.split("?")[0] ?? "", 200)}`,
        { hint: "see docs/gateway.md for the API" },
      ).toJSON(),
    });
  });
}

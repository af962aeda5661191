import { HearthError, isHearthError } from "../errors.js";

/**
 * Any error a route, Fastify or a hook threw, as the HearthError an HTTP
 * client is answered with: the framework's own errors (bad URL encoding,
 * too long a path segment, a body too large, validation) get their
 * documented codes, API misuse is a bad request, anything else is
 * HEARTH_INTERNAL. Shared by every hearth HTTP process.
 */
export function fromRequestError(
  err: unknown,
  where: { docs: string; bodyLimitKey: string },
): HearthError {
  if (isHearthError(err)) return err;
  const e = err as { code?: string; statusCode?: number; validation?: unknown; message?: string };
  if (e.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return new HearthError(
      "HEARTH_URL_TOO_LONG",
      "a path segment is longer than any id hearth issues",
    );
  }
  if (e.code === "FST_ERR_BAD_URL") {
    return new HearthError(
      "HEARTH_BAD_REQUEST",
      "bad request: the URL is not validly percent-encoded",
      { hint: `see ${where.docs} for the API` },
    );
  }
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new HearthError("HEARTH_BODY_TOO_LARGE", e.message ?? "body too large", {
      hint: `send less, or raise ${where.bodyLimitKey}`,
    });
  }
  if (
    e.validation ||
    e.code?.startsWith("FST_ERR_CTP") ||
    e.code === "FST_ERR_VALIDATION" ||
    e.statusCode === 400
  ) {
    return new HearthError("HEARTH_BAD_REQUEST", `bad request: ${e.message ?? "invalid"}`, {
      hint: `see ${where.docs} for the request shapes`,
    });
  }
  if (err instanceof TypeError || err instanceof RangeError) {
    return new HearthError("HEARTH_BAD_REQUEST", `bad request: ${err.message}`);
  }
  return new HearthError("HEARTH_INTERNAL", String(e.message ?? err), { cause: err });
}

import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { ERROR_CODES, HearthError, type HearthErrorCode } from "../errors.js";
import { isPgOutage, PG_RETRY_AFTER_SECONDS } from "../http/readiness.js";
import { fromRequestError as fromHttpError } from "../http/request-error.js";
import { NO_SPACE_SITUATIONS, type NoSpaceSituation } from "../no-space.js";
import type { GatewayMetrics } from "./metrics.js";

/** The HTTP status of each code the gateway answers with (docs/gateway.md); anything else is 500. */
export const STATUS: Partial<Record<HearthErrorCode, number>> = {
  HEARTH_BAD_REQUEST: 400,
  HEARTH_USAGE: 400,
  HEARTH_UNAUTHORIZED: 401,
  HEARTH_HOST_NOT_ALLOWED: 403,
  HEARTH_SCOPE_DENIED: 403,
  HEARTH_PROFILE_DENIED: 403,
  HEARTH_SESSION_NOT_FOUND: 404,
  HEARTH_NOT_FOUND: 404,
  HEARTH_REQUEST_TIMEOUT: 408,
  HEARTH_TURN_BUSY: 409,
  HEARTH_PERMISSION_NOT_FOUND: 404,
  HEARTH_PERMISSION_SETTLED: 409,
  HEARTH_TURN_CANCELLED: 499,
  HEARTH_TITLE_TAKEN: 409,
  HEARTH_CONFLICT: 409,
  HEARTH_IDEMPOTENCY_CONFLICT: 409,
  HEARTH_SESSION_EXISTS: 409,
  HEARTH_UNKNOWN_PARENT: 400,
  HEARTH_BODY_TOO_LARGE: 413,
  HEARTH_URL_TOO_LONG: 414,
  HEARTH_RATE_LIMITED: 429,
  HEARTH_HEADERS_TOO_LARGE: 431,
  HEARTH_RESPONDER_FAILED: 502,
  HEARTH_BUSY: 503,
  HEARTH_MAINTENANCE_RUNNING: 503,
  HEARTH_GENERATION_CHANGED: 503,
  HEARTH_PG_UNAVAILABLE: 503,
  HEARTH_PG_TOO_MANY_CONNECTIONS: 503,
  HEARTH_NO_SPACE: 507,
};

/** 5xx codes whose message and details HTTP clients may see (they were written for them). */
const PUBLIC_SERVER_ERRORS = new Set<HearthErrorCode>(["HEARTH_RESPONDER_FAILED"]);

/** A request's error in the gateway's terms (docs/gateway.md, gateway.bodyLimitBytes). */
export function fromRequestError(err: unknown): HearthError {
  return fromHttpError(err, { docs: "docs/gateway.md", bodyLimitKey: "gateway.bodyLimitBytes" });
}

/**
 * The error as an HTTP client sees it (S1): the code, a message and a
 * hint, never a path or another process's command line. Server-side
 * failures (5xx) carry the code's public description only; the full
 * error goes to the log.
 */
export function publicError(error: HearthError, status: number): Record<string, unknown> {
  if (status >= 500 && !PUBLIC_SERVER_ERRORS.has(error.code)) {
    const retry = retryAfterSeconds(error);
    const situation = noSpaceSituation(error);
    return {
      name: error.name,
      code: error.code,
      message: situation ? NO_SPACE_SITUATIONS[situation] : ERROR_CODES[error.code],
      ...(retry === undefined ? {} : { hint: `retry in ${retry} s (Retry-After)` }),
      ...(situation ? { details: { situation } } : {}),
    };
  }
  const json = error.toJSON();
  // A resource that is a path is the server's business.
  if (typeof json.resource === "string" && json.resource.includes("/")) delete json.resource;
  return json;
}

/** Which full disk a HEARTH_NO_SPACE is about (a write, an open, a copy): each has its own public text. */
function noSpaceSituation(error: HearthError): NoSpaceSituation | undefined {
  const situation = error.details?.situation;
  return error.code === "HEARTH_NO_SPACE" &&
    typeof situation === "string" &&
    Object.hasOwn(NO_SPACE_SITUATIONS, situation)
    ? (situation as NoSpaceSituation)
    : undefined;
}

export function retryAfterSeconds(error: HearthError): number | undefined {
  if (error.code === "HEARTH_RATE_LIMITED") {
    return Number(error.details?.retryAfterSeconds ?? 60);
  }
  // Another turn holds the session: it ends in its own time, or (PostgreSQL)
  // its owner's death frees the lease within seconds.
  if (error.code === "HEARTH_TURN_BUSY") return Number(error.details?.retryAfterSeconds ?? 1);
  if (isPgOutage(error.code)) return PG_RETRY_AFTER_SECONDS;
  if (
    error.code === "HEARTH_BUSY" ||
    error.code === "HEARTH_MAINTENANCE_RUNNING" ||
    error.code === "HEARTH_GENERATION_CHANGED"
  )
    return 1;
  return undefined;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Errors Node's HTTP parser raises before Fastify sees a request: answered in the documented shape. */
export function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Socket,
  metrics: GatewayMetrics,
): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const error =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new HearthError(
          "HEARTH_REQUEST_TIMEOUT",
          "the request did not arrive in time (gateway.requestTimeoutMs)",
        )
      : err.code === "HPE_HEADER_OVERFLOW"
        ? new HearthError("HEARTH_HEADERS_TOO_LARGE", "the request line and headers are too large")
        : new HearthError("HEARTH_BAD_REQUEST", "bad request: malformed HTTP request", {
            hint: "see docs/gateway.md for the API",
          });
  const status = STATUS[error.code] ?? 400;
  metrics.errors.inc({ code: error.code });
  const body = JSON.stringify({ error: publicError(error, status) });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

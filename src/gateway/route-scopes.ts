import type { TokenScope } from "../store/token-scopes.js";

/**
 * The scope each gateway route needs (docs/security.md). A route missing
 * here needs `admin`: a route added without a line fails closed.
 */
const ROUTE_SCOPES: Readonly<Record<string, TokenScope>> = {
  "GET /v1/health": "read",
  "GET /metrics": "read",
  "GET /v1/sessions": "read",
  "GET /v1/sessions/:id": "read",
  "GET /v1/handoffs": "read",
  "GET /v1/sessions/:id/permissions": "read",
  "POST /v1/messages": "chat",
  "POST /v1/sessions/:id/permissions/:callId": "chat",
};

/** Routes any valid token may call, whatever profile it belongs to: it gets what an anonymous caller gets, or more. */
export const ANY_PROFILE_ROUTES: ReadonlySet<string> = new Set(["/v1/health", "/metrics"]);

/** The scope a request to `route` (Fastify's pattern) needs; HEAD is a GET. */
export function scopeNeeded(method: string, route: string): TokenScope {
  const verb = method === "HEAD" ? "GET" : method;
  return ROUTE_SCOPES[`${verb} ${route}`] ?? "admin";
}

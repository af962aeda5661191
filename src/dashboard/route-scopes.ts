import type { TokenScope } from "../store/token-scopes.js";

/**
 * The scope each dashboard change needs (docs/security.md): reads (GET)
 * need `read` unless READ_SCOPES says more; the chat `chat`; every other
 * change `admin`, including one added later without a line here (fails
 * closed).
 */
const CHANGE_SCOPES: Readonly<Record<string, TokenScope>> = {
  "POST /api/logout": "read",
  "POST /api/chat": "chat",
  "PATCH /api/sessions/:profile/:id": "admin",
  "DELETE /api/sessions/:profile/:id": "admin",
  "POST /api/sessions/bulk": "admin",
  "POST /api/maintenance/delete-empty": "admin",
  "POST /api/doctor": "admin",
  "POST /api/backup": "admin",
  "POST /api/jobs/run": "admin",
  "POST /api/jobs/pause": "admin",
};

/** Reads that need more than `read`: the audit trail says who did what, from where. */
const READ_SCOPES: Readonly<Record<string, TokenScope>> = {
  "GET /api/audit": "admin",
  "GET /api/logs": "admin",
  "GET /api/logs/dashboard": "admin",
};

/** The scope a dashboard API request to `route` (Fastify's pattern) needs. */
export function dashboardScopeNeeded(method: string, route: string): TokenScope {
  if (method === "GET" || method === "HEAD") return READ_SCOPES[`GET ${route}`] ?? "read";
  return CHANGE_SCOPES[`${method} ${route}`] ?? "admin";
}

import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AuditActor, AuditEntry } from "../store/audit.js";
import { storesOf } from "./profiles.js";
import { LIMIT, PROFILE } from "./sessions/schemas.js";
import { profilesOf } from "./sessions/scope.js";

/**
 * Who a dashboard request acts as in the audit trail: the token family its
 * browser logged in with, from the request's remote address.
 */
export function browserActor(request: FastifyRequest): AuditActor {
  return {
    kind: "token",
    id: request.browser?.familyId ?? "unknown",
    via: "dashboard",
    address: request.ip,
  };
}

/**
 * GET /api/audit: the audit trail of the profiles the login sees (or the
 * one named, HEARTH_PROFILE_DENIED when it may not), newest first; `since`
 * (ms) and `limit` (1..500) as in `hearth audit`. Read-only, on the
 * read-only stores; it says who did what, so it needs an `admin` login
 * (./route-scopes.ts), not just `read`.
 */
export function registerAuditRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { profile?: string; since?: string; limit?: string } }>(
    "/api/audit",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            profile: PROFILE,
            since: { type: "string", pattern: "^[0-9]{1,15}$" },
            limit: LIMIT,
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const limit = Math.min(500, Number(request.query.limit ?? 100));
      const since = Number(request.query.since ?? 0);
      const entries: (AuditEntry & { profile: string })[] = [];
      for (const profile of profilesOf(stores, request.query.profile)) {
        for (const e of await stores.reader(profile).audit.list({ since, limit }))
          entries.push({ ...e, profile });
      }
      entries.sort((a, b) => b.at - a.at || b.id - a.id);
      return { entries: entries.slice(0, limit) };
    },
  );
}

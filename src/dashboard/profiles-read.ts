import type { FastifyRequest } from "fastify";
import type { ProfileStores } from "./profiles.js";

/** API routes that read no store (the live stream's readers are checked by its poll: ./live.ts). */
const READ_NONE = new Set(["/api/me", "/api/logout", "/api/debug/event-loop", "/api/events"]);

/**
 * The profiles a request reads (its route's profile scope), whose readers
 * are checked for changed files before it is served (ReaderRecovery: an
 * fstat or readlink per file of each). An API request of a login reads
 * the one profile it names (`profile` in the path, the query or the body)
 * when its view shows it, else every profile of its view; the readiness
 * probe pings every served store; pages, assets, the login and requests
 * without one read none (the login's redemption reattaches the profile it
 * writes: ProfileStores.withWriter).
 */
export function profilesRead(request: FastifyRequest, served: ProfileStores): string[] {
  const route = request.routeOptions.url ?? "";
  if (route === "/v1/ready") return served.profiles;
  const view = request.stores;
  if (!view || !route.startsWith("/api/") || READ_NONE.has(route)) return [];
  const named = nameIn(request.params) ?? nameIn(request.query) ?? nameIn(request.body);
  if (named === undefined) return view.profiles;
  // A profile the view does not show: the route refuses it (404 or 403), reading nothing.
  return view.profiles.includes(named) ? [named] : [];
}

/** After a request failed: the profiles it read, or every served one when it read none by name (the login's redemption). */
export function readOrAll(request: FastifyRequest, served: ProfileStores): string[] {
  const read = profilesRead(request, served);
  return read.length > 0 ? read : served.profiles;
}

function nameIn(source: unknown): string | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  const profile = (source as { profile?: unknown }).profile;
  return typeof profile === "string" && profile !== "" ? profile : undefined;
}

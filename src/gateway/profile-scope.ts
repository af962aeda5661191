import type { FastifyInstance, FastifyRequest } from "fastify";
import { HearthError } from "../errors.js";
import { profileDenied } from "../store/token-scopes.js";
import type { ProfileRuntime } from "../turn/run.js";
import type { GatewayDeps } from "./gateway-deps.js";
import { ANY_PROFILE_ROUTES } from "./route-scopes.js";

/**
 * One profile per request (S1), resolved once, after auth and body parsing,
 * and used by every handler: the query string or the body names it (both
 * must agree), else the first served profile. An access token is good
 * only for the profile it was paired for (HEARTH_PROFILE_DENIED, 403,
 * without saying which one that is), except on health and metrics, where
 * any valid token gets what an anonymous caller gets or more.
 */
export function registerProfileScope(app: FastifyInstance, defaultProfile: string): void {
  // A callback hook (no promise per request); a throw is answered like a rejection.
  app.addHook("preHandler", (request, _reply, done) => {
    const fromBody = (request.body as { profile?: unknown } | null | undefined)?.profile;
    const fromQuery = (request.query as { profile?: string } | undefined)?.profile;
    if (typeof fromBody === "string" && fromQuery !== undefined && fromBody !== fromQuery) {
      throw new HearthError(
        "HEARTH_BAD_REQUEST",
        'bad request: "profile" in the query string and in the body disagree',
        { hint: "name the profile once" },
      );
    }
    const profile =
      (typeof fromBody === "string" ? fromBody : undefined) ?? fromQuery ?? defaultProfile;
    const anyProfile = ANY_PROFILE_ROUTES.has(request.routeOptions.url ?? "");
    if (request.authProfile !== undefined && request.authProfile !== profile && !anyProfile)
      throw profileDenied(profile, "access token");
    request.hearthProfile = profile;
    done();
  });
}

/**
 * The runtime of the request's profile. A profile this gateway does not
 * serve is HEARTH_NOT_FOUND; only a caller allowed in (no auth required,
 * or a verified token) learns which profiles are served.
 */
export function runtimeResolver(
  deps: Pick<GatewayDeps, "runtimes" | "config">,
  served: string[],
): (request: FastifyRequest) => ProfileRuntime {
  const defaultProfile = served[0]!;
  return (request) => {
    const profile = request.hearthProfile || defaultProfile;
    const runtime = deps.runtimes.get(profile);
    if (!runtime) {
      const open = !deps.config().gateway.requireAuth || request.authProfile !== undefined;
      throw new HearthError(
        "HEARTH_NOT_FOUND",
        `this gateway does not serve profile ${JSON.stringify(profile)}`,
        open ? { hint: `served: ${served.join(", ")}` } : {},
      );
    }
    return runtime;
  };
}

import type { FastifyInstance, FastifyRequest } from "fastify";
import { PROFILE_PATTERN } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import { RateLimiter } from "../http/rate-limit.js";
import type { Store } from "../store/api.js";
import { requireScope, type TokenScope } from "../store/token-scopes.js";
import { hashToken, type TokenPair } from "../store/tokens.js";
import { scopeNeeded } from "./route-scopes.js";

/**
 * Concurrent refreshes presenting the same token are coalesced into one
 * rotation, and every caller gets the same new pair (D6): the first caller's
 * rotation is shared while it runs, and its result is kept in memory for
 * `gateway.refreshGraceMs`, so a caller that arrives just after is not
 * mistaken for a replay. Across processes and hosts (several gateways on
 * one PostgreSQL database) the store does the same: the rotation keeps its
 * pair for the window sealed under the old token (store/rotation-seal.ts),
 * and another gateway presenting that token gets it. Outside that window, a
 * rotated token presented again revokes its family.
 */
export class RefreshCoalescer {
  private readonly inflight = new Map<string, Promise<TokenPair>>();
  private readonly recent = new Map<string, { pair: TokenPair; until: number }>();

  refresh(store: Store, token: string, config: HearthConfig): Promise<TokenPair> {
    const now = Date.now();
    for (const [k, v] of this.recent) if (v.until <= now) this.recent.delete(k);
    const key = `${store.path}\0${hashToken(token)}`;
    const cached = this.recent.get(key);
    if (cached) return this.stillValid(store, key, cached.pair);
    let running = this.inflight.get(key);
    if (!running) {
      running = store.tokens
        .rotate(token, lifetimes(config), { graceMs: config.gateway.refreshGraceMs })
        .then((outcome) => {
          if (outcome.kind === "reused") {
            throw new HearthError(
              "HEARTH_UNAUTHORIZED",
              "this refresh token was already used: the whole session is revoked",
              { hint: "pair again: hearth token create" },
            );
          }
          this.recent.set(key, {
            pair: outcome.pair,
            until: Date.now() + config.gateway.refreshGraceMs,
          });
          return outcome.pair;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  /**
   * The pair kept for the grace window is handed out again only while its
   * family stands: a family revoked since (a replay, `hearth token revoke`)
   * gets 401 like any other token of it.
   */
  private async stillValid(store: Store, key: string, pair: TokenPair): Promise<TokenPair> {
    const family = (await store.tokens.families()).find((f) => f.id === pair.familyId);
    if (!family || family.revokedAt !== null) {
      this.recent.delete(key);
      throw new HearthError("HEARTH_UNAUTHORIZED", "the refresh token's session was revoked", {
        hint: "pair again: hearth token create",
      });
    }
    return pair;
  }
}

export function lifetimes(config: HearthConfig) {
  return {
    accessMs: config.gateway.accessTokenMinutes * 60_000,
    refreshMs: config.gateway.refreshTokenDays * 24 * 60 * 60_000,
  };
}

const tokenBody = (field: string) =>
  ({
    type: "object",
    required: [field],
    additionalProperties: false,
    properties: {
      [field]: { type: "string", minLength: 1, maxLength: 256 },
      profile: { type: "string", pattern: PROFILE_PATTERN },
    },
  }) as const;

/** Routes served without an access token (the auth routes are rate-limited instead). */
const OPEN_ROUTES = new Set(["/v1/health", "/v1/ready", "/v1/auth/pair", "/v1/auth/refresh"]);
const RATE_LIMITED = new Set(["/v1/auth/pair", "/v1/auth/refresh"]);

/**
 * POST /v1/auth/pair and /v1/auth/refresh, and the access check for the
 * other routes. The check runs on request (S1): before the body is read or
 * validated, so an anonymous caller can neither hold a connection open with
 * a slow body nor learn anything from validation errors. The token decides
 * the profile it is good for; the request's profile must be that one.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: {
    storeOf: (profile: string) => Store;
    served: () => readonly string[];
    config: () => HearthConfig;
  },
): void {
  const coalescer = new RefreshCoalescer();
  const limiter = new RateLimiter(() => deps.config().gateway.authRateLimit);
  const failed = (request: FastifyRequest, err: unknown) => {
    if (isHearthError(err, "HEARTH_UNAUTHORIZED")) {
      // Never the token or code itself: the route, the address and why.
      request.log.warn(
        {
          event: "auth.failed",
          route: request.routeOptions.url ?? "(no route)",
          ip: request.ip,
          reason: err.message,
        },
        "authentication failed",
      );
    }
    return err;
  };

  app.post<{ Body: { code: string; profile?: string } }>(
    "/v1/auth/pair",
    { schema: { body: tokenBody("code") } },
    async (request) => {
      try {
        const pair = await deps
          .storeOf(request.hearthProfile)
          .tokens.redeemPairing(request.body.code, lifetimes(deps.config()));
        limiter.refund(request.ip);
        return pair;
      } catch (err) {
        throw failed(request, err);
      }
    },
  );
  app.post<{ Body: { refreshToken: string; profile?: string } }>(
    "/v1/auth/refresh",
    { schema: { body: tokenBody("refreshToken") } },
    async (request) => {
      try {
        const pair = await coalescer.refresh(
          deps.storeOf(request.hearthProfile),
          request.body.refreshToken,
          deps.config(),
        );
        limiter.refund(request.ip);
        return pair;
      } catch (err) {
        throw failed(request, err);
      }
    },
  );

  // A callback hook: the common requests (no auth required, an open route)
  // pass without a promise or a microtask; a throw is answered like a rejection.
  app.addHook("onRequest", (request: FastifyRequest, _reply, done) => {
    const config = deps.config().gateway;
    const route = request.routeOptions.url;
    if (route !== undefined && RATE_LIMITED.has(route)) {
      const taken = limiter.take(request.ip);
      if (!taken.ok) {
        request.log.warn(
          { event: "auth.rate_limited", route, ip: request.ip },
          "too many authentication attempts",
        );
        throw new HearthError(
          "HEARTH_RATE_LIMITED",
          `too many pairing or refresh attempts from this address; retry in ${taken.retryAfterSeconds} s`,
          {
            hint: "wait for Retry-After; gateway.authRateLimit sets the limit",
            details: { retryAfterSeconds: taken.retryAfterSeconds },
          },
        );
      }
      done();
      return;
    }
    if (!config.requireAuth) return done();
    const open =
      (route !== undefined && OPEN_ROUTES.has(route)) ||
      (route === "/metrics" && config.publicMetrics);
    const header = request.headers.authorization;
    // An open route is served anonymously; a token offered there is still checked.
    if (open && header === undefined) return done();
    authenticate(request, header).then(
      (granted) => {
        request.authProfile = granted.profile;
        // Least privilege, before the body is read: a route missing from the table needs admin.
        try {
          if (route !== undefined)
            requireScope(
              granted.scope,
              scopeNeeded(request.method, route),
              `${request.method} ${route}`,
            );
        } catch (err) {
          done(err as Error);
          return;
        }
        done();
      },
      (err: unknown) => done(failed(request, err) as Error),
    );
  });

  /**
   * The served profile whose store knows this access token, and its
   * family's scope. Every served store is asked, the requested profile's
   * first: a token of another profile is told apart from an unknown one
   * (HEARTH_PROFILE_DENIED in registerProfileScope, not a misleading 401).
   */
  async function authenticate(
    request: FastifyRequest,
    header: string | undefined,
  ): Promise<{ profile: string; scope: TokenScope }> {
    const token = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
    if (!token) {
      throw new HearthError(
        "HEARTH_UNAUTHORIZED",
        "this gateway requires an access token (Authorization: Bearer …)",
        { hint: "pair with a code from hearth token create (POST /v1/auth/pair)" },
      );
    }
    const asked = (request.query as { profile?: string } | undefined)?.profile;
    const candidates = [...deps.served()].sort((a, b) => Number(b === asked) - Number(a === asked));
    for (const profile of candidates) {
      try {
        const { scope } = await deps.storeOf(profile).tokens.verifyAccess(token);
        return { profile, scope };
      } catch (err) {
        if (!isHearthError(err, "HEARTH_UNAUTHORIZED")) throw err;
      }
    }
    throw new HearthError(
      "HEARTH_UNAUTHORIZED",
      "the access token is unknown, revoked or expired",
      { hint: "pair again: hearth token create" },
    );
  }
}

import type { FastifyInstance, FastifyRequest } from "fastify";
import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import type { Store } from "../store/store.js";
import { hashToken, type TokenPair } from "../store/tokens.js";

/**
 * Concurrent refreshes presenting the same token are coalesced into one
 * rotation, and every caller gets the same new pair (D6): the first caller's
 * rotation is shared while it runs, and its result is kept in memory (never
 * on disk) for `gateway.refreshGraceMs`, so a caller that arrives just after
 * is not mistaken for a replay. Outside that window, a rotated token
 * presented again revokes its family.
 */
export class RefreshCoalescer {
  private readonly inflight = new Map<string, Promise<TokenPair>>();
  private readonly recent = new Map<string, { pair: TokenPair; until: number }>();

  refresh(store: Store, token: string, config: HearthConfig): Promise<TokenPair> {
    const now = Date.now();
    for (const [k, v] of this.recent) if (v.until <= now) this.recent.delete(k);
    const key = `${store.path}\0${hashToken(token)}`;
    const cached = this.recent.get(key);
    if (cached) return Promise.resolve(cached.pair);
    let running = this.inflight.get(key);
    if (!running) {
      running = store.tokens
        .rotate(token, lifetimes(config))
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
      profile: { type: "string" },
    },
  }) as const;

/** POST /v1/auth/pair and /v1/auth/refresh, and the access check for the other routes. */
export function registerAuth(
  app: FastifyInstance,
  deps: { storeOf: (profile: string | undefined) => Store; config: () => HearthConfig },
): void {
  const coalescer = new RefreshCoalescer();
  app.post<{ Body: { code: string; profile?: string } }>(
    "/v1/auth/pair",
    { schema: { body: tokenBody("code") } },
    async (request) =>
      deps
        .storeOf(request.body.profile)
        .tokens.redeemPairing(request.body.code, lifetimes(deps.config())),
  );
  app.post<{ Body: { refreshToken: string; profile?: string } }>(
    "/v1/auth/refresh",
    { schema: { body: tokenBody("refreshToken") } },
    async (request) =>
      coalescer.refresh(
        deps.storeOf(request.body.profile),
        request.body.refreshToken,
        deps.config(),
      ),
  );
  app.addHook("preHandler", async (request: FastifyRequest) => {
    if (!deps.config().gateway.requireAuth) return;
    const path = request.url.split("?")[0] ?? "";
    if (path === "/v1/health" || path.startsWith("/v1/auth/") || path === "/metrics") return;
    const header = request.headers.authorization ?? "";
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (!token) {
      throw new HearthError(
        "HEARTH_UNAUTHORIZED",
        "this gateway requires an access token (Authorization: Bearer …)",
        {
          hint: "pair with a code from hearth token create (POST /v1/auth/pair)",
        },
      );
    }
    const profile =
      (request.body as { profile?: string } | undefined)?.profile ??
      (request.query as { profile?: string }).profile;
    await deps.storeOf(profile).tokens.verifyAccess(token);
  });
}

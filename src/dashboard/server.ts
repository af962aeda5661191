import { monitorEventLoopDelay } from "node:perf_hooks";
import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyInstance, LogController } from "fastify";
import { HearthError, type HearthErrorCode, isHearthError } from "../errors.js";
import type { HostPolicy } from "../http/host-check.js";
import { isPgOutage, PG_RETRY_AFTER_SECONDS } from "../http/readiness.js";
import { fromRequestError } from "../http/request-error.js";
import type { EventRing } from "../log/ring.js";
import type { TokenGrant } from "../store/token-scopes.js";
import { registerActivityRoutes } from "./api-activity.js";
import { browserActor, registerAuditRoutes } from "./api-audit.js";
import { registerChatRoutes } from "./api-chat.js";
import { registerHealthRoutes } from "./api-health.js";
import { registerJobRoutes } from "./api-jobs.js";
import { registerEventRoutes } from "./api-logs.js";
import { registerLogRoutes, registerServiceRoutes } from "./api-services.js";
import { registerSessionRoutes } from "./api-sessions.js";
import { type Asset, sendAsset } from "./assets.js";
import type { BrowserSessions } from "./browser-sessions.js";
import type { DoctorRuns } from "./doctor-runs.js";
import type { GatewayClient } from "./gateway-client.js";
import type { LiveFeed } from "./live.js";
import { LOGIN_CSS, loginPage } from "./login-page.js";
import type { Prices } from "./prices.js";
import { registerProbeRoutes } from "./probes.js";
import { type ProfileStores, storesOf } from "./profiles.js";
import { profilesRead, readOrAll } from "./profiles-read.js";
import { registerSecurity, requirePage, SECURITY_HEADERS } from "./security.js";

export interface DashboardDeps {
  stores: ProfileStores;
  sessions: BrowserSessions;
  live: LiveFeed;
  /** How the chat reaches each profile's gateway. */
  gateway: GatewayClient;
  assets: Map<string, Asset>;
  policy: HostPolicy;
  cookieName: string;
  tls: { key: Buffer; cert: Buffer } | undefined;
  /** Redeem a login token (a one-time pairing code) for its family; throws HEARTH_UNAUTHORIZED. */
  redeem: (token: string) => Promise<Login>;
  /** The dashboard's recent warn/error log events (GET /api/logs). */
  events?: EventRing;
  /** The doctor runs the health page shows (kept current: doctor-runs.ts). */
  doctor: DoctorRuns;
  /** dashboard.prices: the Activity page's cost of tokens. */
  prices?: Prices;
}

/** What a redeemed login token grants a browser: its family, profile, scope and reach. */
export interface Login extends TokenGrant {
  familyId: string;
  profile: string;
}

const STATUS: Partial<Record<HearthErrorCode, number>> = {
  HEARTH_BAD_REQUEST: 400,
  HEARTH_USAGE: 400,
  HEARTH_UNAUTHORIZED: 401,
  HEARTH_HOST_NOT_ALLOWED: 403,
  HEARTH_CSRF_REJECTED: 403,
  HEARTH_SCOPE_DENIED: 403,
  HEARTH_PROFILE_DENIED: 403,
  HEARTH_SESSION_NOT_FOUND: 404,
  HEARTH_NOT_FOUND: 404,
  HEARTH_JOB_NOT_FOUND: 404,
  HEARTH_TITLE_TAKEN: 409,
  HEARTH_CONFLICT: 409,
  HEARTH_IDEMPOTENCY_CONFLICT: 409,
  HEARTH_SESSION_EXISTS: 409,
  HEARTH_UNKNOWN_PARENT: 400,
  HEARTH_STORE_HELD: 409,
  HEARTH_BODY_TOO_LARGE: 413,
  HEARTH_URL_TOO_LONG: 414,
  HEARTH_NO_SPACE: 507,
  HEARTH_SEARCH_DEGRADED: 503,
  HEARTH_BUSY: 503,
  HEARTH_MAINTENANCE_RUNNING: 503,
  HEARTH_GENERATION_CHANGED: 503,
  HEARTH_TURN_BUSY: 409,
  HEARTH_RESPONDER_FAILED: 502,
  HEARTH_GATEWAY_UNREACHABLE: 502,
  HEARTH_PG_UNAVAILABLE: 503,
  HEARTH_PG_TOO_MANY_CONNECTIONS: 503,
};

/** Client-side routes: each answers with the app's index.html (after login). */
const PAGES = [
  "/",
  "/sessions",
  "/search",
  "/activity",
  "/services",
  "/logs",
  "/health",
  "/jobs",
  "/chat",
  "/audit",
];

/** The dashboard's HTTP server: pages, `/login`, the bundle, and the JSON API under `/api/`. */
export function buildDashboard(deps: DashboardDeps, logger: boolean | object): FastifyInstance {
  const app = Fastify({
    logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 64 * 1024,
    requestTimeout: 30_000,
    ...(deps.tls ? { https: deps.tls } : {}),
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
  });
  void app.register(fastifyCookie);
  app.after(() => {
    registerSecurity(app, {
      policy: deps.policy,
      sessions: deps.sessions,
      cookieName: deps.cookieName,
      tls: deps.tls !== undefined,
    });
  });

  app.setErrorHandler(async (err, request, reply) => {
    let error = toHearthError(err);
    // A reader on removed files fails every request: reattach it, answer 503 once (F3).
    if (
      (error.code === "HEARTH_SQLITE" ||
        error.code === "HEARTH_INTERNAL" ||
        error.code === "HEARTH_GENERATION_CHANGED") &&
      (await deps.stores.reattachChanged(readOrAll(request, deps.stores)))
    ) {
      // Reattached, or the reattach waits (its old connections still close, or
      // a failed try a second ago): either way a retry is the way out, not a 500.
      request.log.warn({ err }, "request met a changed store generation");
      error = new HearthError(
        "HEARTH_GENERATION_CHANGED",
        "the store's files changed under the dashboard; it reattaches to the current ones: retry",
        { hint: "retry the request" },
      );
      void reply.header("retry-after", "1");
      return reply.status(503).send({ error: error.toJSON() });
    }
    const status = STATUS[error.code] ?? 500;
    if (status >= 500) request.log.error({ err, code: error.code }, "request failed");
    const body =
      error.code === "HEARTH_INTERNAL"
        ? {
            name: "HearthError",
            code: error.code,
            message: "an unexpected error inside the dashboard; its log says more",
          }
        : error.toJSON();
    if (status === 503)
      void reply.header("retry-after", String(isPgOutage(error.code) ? PG_RETRY_AFTER_SECONDS : 1));
    return reply.status(status).send({ error: body });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      error: new HearthError(
        "HEARTH_NOT_FOUND",
        `no route ${request.method} ${request.url.split("?")[0]}`,
        {
          hint: "docs/dashboard.md lists the API",
        },
      ).toJSON(),
    });
  });

  // Every logged-in request sees the stores its login may see (its own
  // profile, or all for the operator's link); routes reach them only
  // through storesOf(request).
  app.addHook("preHandler", async (request) => {
    if (request.browser) request.stores = deps.stores.forLogin(request.browser);
    // Served from the current files, whoever removed or replaced them (F3): the files of the
    // profiles this request reads, not every served one's (./profiles-read.ts).
    await deps.stores.reattachChanged(profilesRead(request, deps.stores));
  });

  app.register(async (scope) => {
    scope.get<{ Querystring: { token?: string } }>("/login", async (request, reply) => {
      const token = request.query.token;
      if (typeof token === "string" && token !== "") {
        try {
          const login = await deps.redeem(token);
          // No cookie unless the login is in the profile's audit trail.
          await deps.stores.withWriter(login.profile, (store) =>
            store.audit.record({
              action: "dashboard.login",
              actor: { ...browserActor(request), id: login.familyId },
              targets: [login.familyId],
              detail: { scope: login.scope, allProfiles: login.allProfiles },
            }),
          );
          const { id } = await deps.sessions.create(login);
          request.log.info(
            {
              event: "dashboard.login",
              familyId: login.familyId,
              profile: login.profile,
              scope: login.scope,
              allProfiles: login.allProfiles,
            },
            "browser logged in",
          );
          void reply.setCookie(deps.cookieName, id, {
            httpOnly: true,
            sameSite: "strict",
            secure: deps.tls !== undefined,
            path: "/",
          });
          return reply.redirect("/", 303);
        } catch (err) {
          if (!isHearthError(err, "HEARTH_UNAUTHORIZED")) throw err;
          request.log.warn({ event: "dashboard.login_refused" }, "login link refused");
          return reply.status(401).type("text/html; charset=utf-8").send(loginPage("invalid"));
        }
      }
      if (request.browser) return reply.redirect("/", 302);
      return reply.type("text/html; charset=utf-8").send(loginPage("none"));
    });
    scope.get("/login.css", async (_request, reply) =>
      reply.type("text/css; charset=utf-8").send(LOGIN_CSS),
    );

    const index = deps.assets.get("/index.html");
    const page = async (
      request: import("fastify").FastifyRequest,
      reply: import("fastify").FastifyReply,
    ) => {
      if (!requirePage(request, reply)) return reply;
      if (!index) {
        return reply
          .status(503)
          .type("text/plain; charset=utf-8")
          .send("The dashboard's front end is not built: run npm run build, then restart it.");
      }
      return sendAsset(request, reply, index);
    };
    for (const path of PAGES) scope.get(path, page);
    scope.get("/sessions/:profile/:id", page);
    scope.get("/chat/:profile/:id", page);

    scope.get<{ Params: { "*": string } }>("/assets/*", async (request, reply) => {
      const asset = deps.assets.get(`/assets/${request.params["*"]}`);
      if (!asset) throw new HearthError("HEARTH_NOT_FOUND", "no such asset");
      void reply.header("cache-control", "public, max-age=31536000, immutable");
      return sendAsset(request, reply, asset);
    });
    scope.get("/favicon.svg", async (request, reply) => {
      const asset = deps.assets.get("/favicon.svg");
      if (!asset) throw new HearthError("HEARTH_NOT_FOUND", "no favicon");
      return sendAsset(request, reply, asset);
    });

    scope.get("/api/me", async (request) => ({
      csrfToken: request.browser!.csrf,
      profiles: storesOf(request).profiles,
      scope: request.browser!.scope,
      allProfiles: request.browser!.allProfiles,
      pid: process.pid,
    }));
    scope.post("/api/logout", async (request, reply) => {
      await deps.sessions.end(request.cookies[deps.cookieName]);
      void reply.clearCookie(deps.cookieName, { path: "/" });
      return { ok: true };
    });
    // The dashboard's own event-loop lateness (the benchmark reads it; an
    // operator may too): max, p99 and mean since start or the last reset, in
    // ms beyond the 10 ms timer the histogram samples with.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    app.addHook("onClose", async () => loop.disable());
    scope.get<{ Querystring: { reset?: string } }>("/api/debug/event-loop", async (request) => {
      const ms = (ns: number) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
      const out = {
        maxMs: ms(loop.max),
        p99Ms: ms(loop.percentile(99)),
        meanMs: ms(loop.mean),
        samples: loop.count,
        resolutionMs: 10,
      };
      if (request.query.reset === "true") loop.reset();
      return out;
    });
    scope.get<{ Querystring: { watch?: string } }>(
      "/api/events",
      {
        schema: {
          querystring: {
            type: "object",
            properties: { watch: { type: "string", maxLength: 300, pattern: "^[^/]+/[^/]+$" } },
            additionalProperties: false,
          },
        },
      },
      async (request, reply) => {
        const watch = request.query.watch;
        const [profile, sessionId] = watch ? watch.split("/") : [];
        // An unknown profile is HEARTH_NOT_FOUND (404), another login's HEARTH_PROFILE_DENIED (403), like every other route's.
        const visible = storesOf(request);
        if (profile !== undefined) visible.reader(profile);
        reply.hijack();
        deps.live.attach(
          reply.raw,
          { ...SECURITY_HEADERS },
          profile && sessionId ? { profile, sessionId } : null,
          visible.profiles,
        );
      },
    );
    registerSessionRoutes(scope);
    registerHealthRoutes(scope, deps.doctor);
    registerActivityRoutes(scope, deps.prices);
    registerServiceRoutes(scope);
    registerLogRoutes(scope);
    registerJobRoutes(scope);
    registerAuditRoutes(scope);
    registerChatRoutes(scope, { gateway: deps.gateway });
    registerProbeRoutes(scope, { stores: deps.stores });
    if (deps.events) registerEventRoutes(scope, deps.events);
  });
  return app;
}

function toHearthError(err: unknown): HearthError {
  return fromRequestError(err, { docs: "docs/dashboard.md", bodyLimitKey: "the request size" });
}

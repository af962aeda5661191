import { setMaxListeners } from "node:events";
import Fastify, { type FastifyInstance, type FastifyReply, LogController } from "fastify";
import { HearthError } from "../errors.js";
import { capConnectionsPerClient } from "../http/connection-cap.js";
import type { GatewayDeps, RouteContext } from "./gateway-deps.js";
import { registerHostGuard } from "./host-guard.js";
import { registerAuth } from "./http-auth.js";
import { answerClientError, fromRequestError, publicError, STATUS } from "./http-errors.js";
import { registerProfileScope, runtimeResolver } from "./profile-scope.js";
import { registerErrorReplies } from "./route-errors.js";
import { registerHandoffRoutes } from "./routes/handoffs.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerMessageRoutes } from "./routes/messages.js";
import { registerPermissionRoutes } from "./routes/permissions.js";
import { registerSessionRoutes } from "./routes/sessions.js";

export type { GatewayDeps } from "./gateway-deps.js";

/** The versioned HTTP API (docs/gateway.md). Every error body is `{ error: HearthError JSON }`. */
export function buildServer(deps: GatewayDeps, logger: boolean | object): FastifyInstance {
  const g = deps.config().gateway;
  const app = Fastify({
    logger,
    // One log line per request would be most of the log under load; errors are logged by registerErrorReplies.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: g.bodyLimitBytes,
    // Slow bodies and stalled connections (docs/security.md): the headers and
    // the body must arrive within requestTimeoutMs; the answer (a long turn,
    // a stream) may take longer.
    requestTimeout: g.requestTimeoutMs,
    keepAliveTimeout: g.keepAliveTimeoutMs,
    http: {
      requestTimeout: g.requestTimeoutMs,
      headersTimeout: Math.min(g.requestTimeoutMs, 10_000),
      keepAliveTimeout: g.keepAliveTimeoutMs,
      // Node checks those timeouts on this period (30 s by default).
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(g.requestTimeoutMs / 4)),
      ),
      // A request without Host is refused by the Host check, in the documented shape.
      requireHostHeader: false,
    },
    // Errors the framework answers before any route: the documented shape too.
    clientErrorHandler: (err, socket) => answerClientError(err, socket, deps.metrics),
    frameworkErrors: (err, _request, reply) => {
      const error = fromRequestError(err);
      const status = STATUS[error.code] ?? 400;
      deps.metrics.errors.inc({ code: error.code });
      void (reply as FastifyReply).status(status).send({ error: publicError(error, status) });
    },
    // Bodies are checked strictly (no coercion, unknown fields refused); query
    // strings are strings and are read by the handlers.
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
  });
  app.server.maxConnections = g.maxConnections;
  capConnectionsPerClient(app.server, g.maxConnectionsPerClient);
  // The turns in flight share one drain listener (followDrain); other listeners stay unbounded.
  if (deps.draining) setMaxListeners(0, deps.draining);
  app.decorateRequest("hearthProfile", "");
  app.decorateRequest("authProfile", undefined);
  const served = [...deps.runtimes.keys()];
  const ctx: RouteContext = { deps, served, runtimeOf: runtimeResolver(deps, served) };

  registerErrorReplies(app, deps);
  registerHostGuard(app, deps.config);
  registerAuth(app, {
    storeOf: (profile) => {
      const runtime = deps.runtimes.get(profile);
      if (!runtime) throw new HearthError("HEARTH_UNAUTHORIZED", "unknown profile");
      return runtime.store;
    },
    served: () => served,
    config: deps.config,
  });
  registerProfileScope(app, served[0]!);

  registerHealthRoutes(app, ctx);
  registerMessageRoutes(app, ctx);
  registerSessionRoutes(app, ctx);
  registerPermissionRoutes(app, ctx);
  registerHandoffRoutes(app, ctx);
  return app;
}

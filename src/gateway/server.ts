import { setMaxListeners } from "node:events";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { isProfileName } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import { hostPolicy, hostRefusal } from "../http/host-check.js";
import type { Responder } from "../turn/responder.js";
import { type ProfileRuntime, runTurn } from "../turn/run.js";
import type { ToolRegistry } from "../turn/tools/registry.js";
import { registerAuth } from "./http-auth.js";
import {
  answerClientError,
  fromRequestError,
  publicError,
  retryAfterSeconds,
  STATUS,
  truncate,
} from "./http-errors.js";
import { checkText, FLAG, type MessageBody, messageBody, query } from "./message-body.js";
import type { GatewayMetrics } from "./metrics.js";
import { followDrain, sendTranscript } from "./response-parts.js";

export interface GatewayDeps {
  runtimes: Map<string, ProfileRuntime>;
  config: () => HearthConfig;
  responder: () => Responder;
  /** The tools offered to turns (tools.* in config.json). */
  tools?: () => ToolRegistry;
  metrics: GatewayMetrics;
  /** Aborted when the gateway stops: responders give up. */
  shutdown: AbortSignal;
  /** Aborted when the gateway starts draining: tool loops stop at their next step. */
  draining?: AbortSignal;
  /** Reattaches a store whose files changed under the process (F3); called with every failed request's error. */
  recover?: (err: unknown) => Promise<unknown>;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The one profile this request is about (S1): resolved once, used by auth and the handler. */
    hearthProfile: string;
    /** The profile the request's access token was paired for, once verified. */
    authProfile: string | undefined;
  }
}

/** The versioned HTTP API (docs/gateway.md). Every error body is `{ error: HearthError JSON }`. */
export function buildServer(deps: GatewayDeps, logger: boolean | object): FastifyInstance {
  const config = deps.config();
  const g = config.gateway;
  const app = Fastify({
    logger,
    // One log line per request would be most of the log under load; errors are logged below.
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
  // One drain listener per turn in flight (followDrain): as many as connections.
  if (deps.draining) setMaxListeners(0, deps.draining);
  app.decorateRequest("hearthProfile", "");
  app.decorateRequest("authProfile", undefined);
  const served = [...deps.runtimes.keys()];
  const defaultProfile = served[0]!;
  const runtimeOf = (request: FastifyRequest): ProfileRuntime => {
    const profile = request.hearthProfile || defaultProfile;
    const runtime = deps.runtimes.get(profile);
    if (!runtime) {
      // Only a caller allowed in may learn which profiles are served.
      const open = !deps.config().gateway.requireAuth || request.authProfile !== undefined;
      throw new HearthError(
        "HEARTH_NOT_FOUND",
        `this gateway does not serve profile ${JSON.stringify(profile)}`,
        open ? { hint: `served: ${served.join(", ")}` } : {},
      );
    }
    return runtime;
  };

  app.setErrorHandler(async (err, request, reply) => {
    const error = fromRequestError(err);
    const status = STATUS[error.code] ?? 500;
    deps.metrics.errors.inc({ code: error.code });
    // A generation change is repaired here, once; the request that met it wrote nothing acknowledged.
    const recovered = await deps.recover?.(error);
    if (!recovered && status >= 500) request.log.error({ err, code: error.code }, "request failed");
    const retryAfter = recovered ? 0 : retryAfterSeconds(error);
    if (retryAfter !== undefined) void reply.header("retry-after", String(retryAfter));
    return reply.status(status).send({ error: publicError(error, status) });
  });
  app.setNotFoundHandler((request, reply) => {
    deps.metrics.errors.inc({ code: "HEARTH_NOT_FOUND" });
    void reply.status(404).send({
      error: new HearthError(
        "HEARTH_NOT_FOUND",
        `no route ${request.method} ${truncate(request.url.split("?")[0] ?? "", 200)}`,
        { hint: "see docs/gateway.md for the API" },
      ).toJSON(),
    });
  });

  // First, before anything else: is this a Host (and Origin) we answer for? (S1, DNS rebinding)
  // `passed`: the last Host header this policy answered (without an Origin);
  // the same string passes again without being parsed again.
  let policy = {
    config,
    value: hostPolicy({ bind: g.host, allowedHosts: g.allowedHosts }),
    passed: undefined as string | undefined,
  };
  app.addHook("onRequest", async (request) => {
    const now = deps.config();
    if (policy.config !== now) {
      policy = {
        config: now,
        value: hostPolicy({ bind: g.host, allowedHosts: now.gateway.allowedHosts }),
        passed: undefined,
      };
    }
    const { host, origin } = request.headers;
    const known = host !== undefined && host === policy.passed && origin === undefined;
    const refusal = known ? undefined : hostRefusal(request.headers, policy.value);
    if (!refusal && origin === undefined) policy.passed = host;
    if (refusal) {
      request.log.warn(
        {
          event: "http.host_refused",
          ip: request.ip,
          host: truncate(request.headers.host ?? "", 100),
        },
        "request refused: unknown Host or Origin",
      );
      throw refusal;
    }
    // The profile asked for in the query string, checked before it is used or echoed.
    const asked = (request.query as { profile?: unknown } | undefined)?.profile;
    if (asked !== undefined && !isProfileName(asked)) {
      throw new HearthError(
        "HEARTH_BAD_REQUEST",
        'bad request: the "profile" query parameter must be one profile name (1–64 lowercase letters, digits, "-" or "_")',
        { hint: "see docs/gateway.md for the request shapes" },
      );
    }
  });

  registerAuth(app, {
    storeOf: (profile) => {
      const runtime = deps.runtimes.get(profile);
      if (!runtime) throw new HearthError("HEARTH_UNAUTHORIZED", "unknown profile");
      return runtime.store;
    },
    served: () => served,
    config: deps.config,
  });

  // One profile per request (S1), resolved once, after auth and body parsing,
  // and used by every handler: the query string or the body names it (both
  // must agree), else the first served profile. An access token is good
  // only for the profile it was paired for.
  app.addHook("preHandler", async (request) => {
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
    if (request.authProfile !== undefined && request.authProfile !== profile) {
      throw new HearthError(
        "HEARTH_UNAUTHORIZED",
        "this access token was not issued for the requested profile",
        { hint: "pair a client for that profile: hearth --profile NAME token create" },
      );
    }
    request.hearthProfile = profile;
  });

  app.get("/v1/health", async (request) => {
    // Behind auth, an anonymous caller learns only that the gateway is up.
    if (deps.config().gateway.requireAuth && request.authProfile === undefined)
      return { status: "ok" };
    return {
      status: "ok",
      pid: process.pid,
      profiles: served,
      responder: deps.responder().name,
      uptimeMs: Math.round(process.uptime() * 1000),
    };
  });

  app.get("/metrics", async (_request, reply) => {
    void reply.header("content-type", deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  app.post<{ Body: MessageBody }>(
    "/v1/messages",
    { schema: { body: messageBody } },
    async (request, reply) => {
      const body = request.body;
      checkText(body);
      const runtime = runtimeOf(request);
      const inbound = {
        platform: body.platform,
        chat: body.chat,
        content: body.content,
        clientId: body.clientId,
      };
      // A client that goes away, or a drain, stops the turn at its next step.
      const gone = new AbortController();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // Not AbortSignal.any([gone, draining]): on Node 20 every call leaves a
      // WeakRef in the long-lived draining signal for good (the gateway
      // grew ~60 bytes a turn). A listener, removed when the turn ends.
      const stopOnDrain = followDrain(deps.draining, gone);
      const turnDeps = {
        responder: deps.responder(),
        config: deps.config(),
        tools: deps.tools?.(),
        metrics: deps.metrics,
        signal: deps.shutdown,
        stop: gone.signal,
        log: request.log,
      };
      const wantsStream =
        body.stream === true || (request.headers.accept ?? "").includes("text/event-stream");
      try {
        if (!wantsStream) {
          const result = await runTurn(runtime, inbound, turnDeps);
          return { profile: runtime.profile, ...result };
        }
        return await streamTurn(reply, runtime, inbound, turnDeps, deps.metrics, deps.recover);
      } finally {
        stopOnDrain();
      }
    },
  );

  app.get<{
    Querystring: { profile?: string; limit?: string; cursor?: string; all?: "true" | "false" };
  }>(
    "/v1/sessions",
    {
      schema: {
        querystring: query({
          limit: { type: "string", pattern: "^(?:[1-9][0-9]{0,2})$" },
          cursor: { type: "string", maxLength: 512 },
          all: FLAG,
        }),
      },
    },
    async (request) => {
      const q = request.query;
      const runtime = runtimeOf(request);
      const limit = q.limit === undefined ? 50 : Number(q.limit);
      if (limit > 500) throw new RangeError("querystring/limit must be at most 500");
      return runtime.store.sessions.list({
        limit,
        includeArchived: q.all === "true",
        includeHidden: q.all === "true",
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.get<{
    Querystring: { profile?: string; state?: "pending" | "running" | "completed" | "failed" };
  }>(
    "/v1/handoffs",
    {
      schema: {
        querystring: query({
          state: { type: "string", enum: ["pending", "running", "completed", "failed"] },
        }),
      },
    },
    async (request) => {
      const runtime = runtimeOf(request);
      return {
        profile: runtime.profile,
        sessions: await runtime.store.handoffs.list(request.query.state ?? "completed"),
      };
    },
  );

  app.get<{
    Params: { id: string };
    Querystring: { profile?: string; history?: "true" | "false" };
  }>(
    "/v1/sessions/:id",
    {
      schema: {
        querystring: query({ history: FLAG }),
      },
    },
    async (request, reply) => {
      const runtime = runtimeOf(request);
      const session = await runtime.store.sessions.require(request.params.id);
      // The transcript's JSON is built on a reader thread a part (~1 MiB) at
      // a time, each part asked for when the socket has taken the last one
      // and handed back to the thread once written: a 100,000-message
      // session never holds the loop that serves turns for long, and its
      // bytes never pile up on this thread's heap.
      const parts = await runtime.store.messages.loadJsonParts(session.id, {
        includeHistory: request.query.history === "true",
      });
      const head = JSON.stringify({ profile: runtime.profile, session });
      reply.hijack();
      await sendTranscript(reply.raw, `${head.slice(0, -1)},"messages":`, parts);
      return reply;
    },
  );
  return app;
}

/**
 * Server-sent events: `stored` (the inbound message is committed), `delta`…,
 * `tool_call` and `tool_result` (each step of the tool loop, once committed),
 * then `reply` or `error`.
 */
async function streamTurn(
  reply: FastifyReply,
  runtime: ProfileRuntime,
  inbound: Parameters<typeof runTurn>[1],
  turnDeps: Parameters<typeof runTurn>[2],
  metrics: GatewayMetrics,
  recover: GatewayDeps["recover"],
): Promise<FastifyReply> {
  const raw = reply.raw;
  const send = (event: string, data: unknown) =>
    raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  reply.hijack();
  raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  try {
    const result = await runTurn(runtime, inbound, turnDeps, {
      onStored: (message, session) =>
        send("stored", { profile: runtime.profile, session, message }),
      onDelta: (text) => send("delta", { text }),
      onToolCalls: (message) => send("tool_call", { message }),
      onToolResult: (message) => send("tool_result", { message }),
    });
    send("reply", { profile: runtime.profile, ...result });
  } catch (err) {
    const error = fromRequestError(err);
    metrics.errors.inc({ code: error.code });
    await recover?.(error);
    const status = STATUS[error.code] ?? 500;
    send("error", { error: publicError(error, status) });
  }
  raw.end();
  return reply;
}

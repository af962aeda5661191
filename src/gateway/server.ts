import Fastify, { type FastifyInstance, type FastifyReply, LogController } from "fastify";
import type { HearthConfig } from "../config/schema.js";
import { HearthError, type HearthErrorCode, isHearthError } from "../errors.js";
import type { Responder } from "../turn/responder.js";
import { type ProfileRuntime, runTurn } from "../turn/run.js";
import { registerAuth } from "./http-auth.js";
import type { GatewayMetrics } from "./metrics.js";

export interface GatewayDeps {
  runtimes: Map<string, ProfileRuntime>;
  config: () => HearthConfig;
  responder: () => Responder;
  metrics: GatewayMetrics;
  /** Aborted when the gateway stops: responders give up. */
  shutdown: AbortSignal;
  /** Reattaches a store whose files changed under the process (F3); called with every failed request's error. */
  recover?: (err: unknown) => Promise<unknown>;
}

const STATUS: Partial<Record<HearthErrorCode, number>> = {
  HEARTH_BAD_REQUEST: 400,
  HEARTH_USAGE: 400,
  HEARTH_UNAUTHORIZED: 401,
  HEARTH_SESSION_NOT_FOUND: 404,
  HEARTH_NOT_FOUND: 404,
  HEARTH_TURN_BUSY: 409,
  HEARTH_TITLE_TAKEN: 409,
  HEARTH_BODY_TOO_LARGE: 413,
  HEARTH_RESPONDER_FAILED: 502,
  HEARTH_BUSY: 503,
  HEARTH_MAINTENANCE_RUNNING: 503,
  HEARTH_GENERATION_CHANGED: 503,
  HEARTH_NO_SPACE: 507,
};

const messageBody = {
  type: "object",
  required: ["platform", "chat", "content"],
  additionalProperties: false,
  properties: {
    profile: { type: "string", minLength: 1, maxLength: 64 },
    platform: { type: "string", minLength: 1, maxLength: 64 },
    chat: { type: "string", minLength: 1, maxLength: 256 },
    content: { type: "string", minLength: 1 },
    clientId: { type: "string", minLength: 1, maxLength: 128 },
    stream: { type: "boolean" },
  },
} as const;

/** Query strings arrive as strings: flags are "true" or "false". */
const FLAG = { type: "string", enum: ["true", "false"] } as const;

/** A query-string schema: every route takes `profile`; nothing unknown is accepted. */
function query(properties: Record<string, unknown>) {
  return {
    type: "object",
    additionalProperties: false,
    properties: { profile: { type: "string" }, ...properties },
  } as const;
}

interface MessageBody {
  profile?: string;
  platform: string;
  chat: string;
  content: string;
  clientId?: string;
  stream?: boolean;
}

/** The versioned HTTP API (docs/gateway.md). Every error body is `{ error: HearthError JSON }`. */
export function buildServer(deps: GatewayDeps, logger: boolean | object): FastifyInstance {
  const config = deps.config();
  const app = Fastify({
    logger,
    // One log line per request would be most of the log under load; errors are logged below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.gateway.bodyLimitBytes,
    // Bodies are checked strictly (no coercion, unknown fields refused); query
    // strings are strings and are read by the handlers.
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
  });
  const defaultProfile = [...deps.runtimes.keys()][0]!;
  const runtimeOf = (profile: string | undefined): ProfileRuntime => {
    const runtime = deps.runtimes.get(profile ?? defaultProfile);
    if (!runtime) {
      throw new HearthError(
        "HEARTH_NOT_FOUND",
        `this gateway does not serve profile ${JSON.stringify(profile)}`,
        {
          hint: `served: ${[...deps.runtimes.keys()].join(", ")}`,
        },
      );
    }
    return runtime;
  };

  app.setErrorHandler(async (err, request, reply) => {
    const error = toHearthError(err);
    const status = STATUS[error.code] ?? 500;
    deps.metrics.errors.inc({ code: error.code });
    if (await deps.recover?.(error)) {
      // Nothing of this request was acknowledged; the store is attached to live files again.
      void reply.header("retry-after", "0");
    } else if (status >= 500) request.log.error({ err, code: error.code }, "request failed");
    if (status === 503 && !reply.hasHeader("retry-after")) void reply.header("retry-after", "1");
    return reply.status(status).send({ error: error.toJSON() });
  });
  app.setNotFoundHandler((request, reply) => {
    deps.metrics.errors.inc({ code: "HEARTH_NOT_FOUND" });
    void reply.status(404).send({
      error: new HearthError("HEARTH_NOT_FOUND", `no route ${request.method} ${request.url}`, {
        hint: "see docs/gateway.md for the API",
      }).toJSON(),
    });
  });

  registerAuth(app, { storeOf: (profile) => runtimeOf(profile).store, config: deps.config });

  app.get("/v1/health", async () => ({
    status: "ok",
    pid: process.pid,
    profiles: [...deps.runtimes.keys()],
    responder: deps.responder().name,
    uptimeMs: Math.round(process.uptime() * 1000),
  }));

  app.get("/metrics", async (_request, reply) => {
    void reply.header("content-type", deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  app.post<{ Body: MessageBody }>(
    "/v1/messages",
    { schema: { body: messageBody } },
    async (request, reply) => {
      const body = request.body;
      const runtime = runtimeOf(body.profile);
      const inbound = {
        platform: body.platform,
        chat: body.chat,
        content: body.content,
        clientId: body.clientId,
      };
      const turnDeps = {
        responder: deps.responder(),
        config: deps.config(),
        metrics: deps.metrics,
        signal: deps.shutdown,
        log: request.log,
      };
      const wantsStream =
        body.stream === true || (request.headers.accept ?? "").includes("text/event-stream");
      if (!wantsStream) {
        const result = await runTurn(runtime, inbound, turnDeps);
        return { profile: runtime.profile, ...result };
      }
      return streamTurn(reply, runtime, inbound, turnDeps, deps.metrics, deps.recover);
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
          cursor: { type: "string" },
          all: FLAG,
        }),
      },
    },
    async (request) => {
      const q = request.query;
      const runtime = runtimeOf(q.profile);
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
      const runtime = runtimeOf(request.query.profile);
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
    async (request) => {
      const runtime = runtimeOf(request.query.profile);
      const session = await runtime.store.sessions.require(request.params.id);
      const messages = await runtime.store.messages.load(session.id, {
        includeHistory: request.query.history === "true",
      });
      return { profile: runtime.profile, session, messages };
    },
  );
  return app;
}

/** Server-sent events: `stored` (the inbound message is committed), `delta`…, then `reply` or `error`. */
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
    });
    send("reply", { profile: runtime.profile, ...result });
  } catch (err) {
    const error = toHearthError(err);
    metrics.errors.inc({ code: error.code });
    await recover?.(error);
    send("error", { error: error.toJSON() });
  }
  raw.end();
  return reply;
}

function toHearthError(err: unknown): HearthError {
  if (isHearthError(err)) return err;
  const e = err as { code?: string; statusCode?: number; validation?: unknown; message?: string };
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new HearthError("HEARTH_BODY_TOO_LARGE", e.message ?? "body too large", {
      hint: "send less, or raise gateway.bodyLimitBytes",
    });
  }
  if (
    e.validation ||
    e.code?.startsWith("FST_ERR_CTP") ||
    e.code === "FST_ERR_VALIDATION" ||
    e.statusCode === 400
  ) {
    return new HearthError("HEARTH_BAD_REQUEST", `bad request: ${e.message ?? "invalid"}`, {
      hint: "see docs/gateway.md for the request shapes",
    });
  }
  if (err instanceof TypeError || err instanceof RangeError) {
    return new HearthError("HEARTH_BAD_REQUEST", `bad request: ${err.message}`);
  }
  return new HearthError("HEARTH_INTERNAL", String(e.message ?? err), { cause: err });
}

import type { FastifyReply } from "fastify";
import { type ProfileRuntime, runTurn } from "../../turn/run.js";
import type { GatewayDeps } from "../gateway-deps.js";
import { fromRequestError, publicError, retryAfterSeconds, STATUS } from "../http-errors.js";
import type { GatewayMetrics } from "../metrics.js";
import { permissionView } from "./permissions.js";

/**
 * Server-sent events: `stored` (the inbound message is committed), `delta`…,
 * `tool_call` and `tool_result` (each step of the tool loop, once committed),
 * `permission_required` (a call waits for a person's answer, its request
 * committed), then `reply` or `error`.
 */
export async function streamTurn(
  reply: FastifyReply,
  runtime: ProfileRuntime,
  inbound: Parameters<typeof runTurn>[1],
  turnDeps: Parameters<typeof runTurn>[2],
  metrics: GatewayMetrics,
  recover: GatewayDeps["recover"],
): Promise<FastifyReply> {
  const raw = reply.raw;
  reply.hijack();
  // The head goes out with the first event: a turn refused before anything
  // was stored (the store unreachable, the session busy) is answered with
  // its status and Retry-After, as without streaming.
  const send = (event: string, data: unknown) => {
    if (!raw.headersSent)
      raw.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
    raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    const result = await runTurn(runtime, inbound, turnDeps, {
      onStored: (message, session) =>
        send("stored", { profile: runtime.profile, session, message }),
      onDelta: (text) => send("delta", { text }),
      onToolCalls: (message) => send("tool_call", { message }),
      onToolResult: (message) => send("tool_result", { message }),
      onPermissionRequired: (request) => send("permission_required", permissionView(request)),
    });
    send("reply", { profile: runtime.profile, ...result });
  } catch (err) {
    const error = fromRequestError(err);
    metrics.errors.inc({ code: error.code });
    const recovered = await recover?.(error);
    const status = STATUS[error.code] ?? 500;
    if (raw.headersSent) send("error", { error: publicError(error, status) });
    else {
      const retryAfter = recovered ? 0 : retryAfterSeconds(error);
      raw.writeHead(status, {
        "content-type": "application/json; charset=utf-8",
        ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) }),
      });
      raw.write(JSON.stringify({ error: publicError(error, status) }));
    }
  }
  raw.end();
  return reply;
}

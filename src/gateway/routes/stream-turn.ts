import type { FastifyReply } from "fastify";
import { type ProfileRuntime, runTurn } from "../../turn/run.js";
import type { GatewayDeps } from "../gateway-deps.js";
import { fromRequestError, publicError, STATUS } from "../http-errors.js";
import type { GatewayMetrics } from "../metrics.js";

/**
 * Server-sent events: `stored` (the inbound message is committed), `delta`…,
 * `tool_call` and `tool_result` (each step of the tool loop, once committed),
 * then `reply` or `error`.
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

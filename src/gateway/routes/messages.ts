import type { FastifyInstance } from "fastify";
import { runTurn } from "../../turn/run.js";
import { TurnStop } from "../../turn/stop.js";
import type { RouteContext } from "../gateway-deps.js";
import { checkText, type MessageBody, messageBody } from "../message-body.js";
import { followDrain } from "../response-parts.js";
import { streamTurn } from "./stream-turn.js";

/** POST /v1/messages: one agent turn, answered as JSON or streamed as server-sent events. */
export function registerMessageRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { deps, runtimeOf } = ctx;
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
      const gone = new TurnStop();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // Not AbortSignal.any([gone, draining]): on Node 20 every call leaves a
      // WeakRef in the long-lived draining signal for good (the gateway
      // grew ~60 bytes a turn). Followed in a set (one listener for every turn), left when the turn ends.
      const stopOnDrain = followDrain(deps.draining, gone);
      const turnDeps = {
        responder: deps.responder(),
        config: deps.config(),
        tools: deps.tools?.(),
        metrics: deps.metrics,
        signal: deps.shutdown,
        stop: gone,
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
}

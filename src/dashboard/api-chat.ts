import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { ERROR_CODES, HearthError, type HearthErrorCode, isHearthError } from "../errors.js";
import type { GatewayClient } from "./gateway-client.js";
import { storesOf } from "./profiles.js";
import { SECURITY_HEADERS } from "./security.js";

const PROFILE = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]{0,63}$" } as const;

/** The platform of conversations started from the dashboard's chat page. */
export const CHAT_PLATFORM = "dashboard";

/**
 * Chat: `POST /api/chat` relays one message to the profile's gateway
 * (`POST /v1/messages`, stream) and streams its server-sent events
 * (`stored`, `delta`…, `reply` or `error`) back to the page unchanged. The
 * browser talks only to the dashboard (same origin: its cookie, CSRF token,
 * Origin and Host checks apply as to every change); the dashboard talks to
 * the gateway on the address the gateway recorded. A session is continued
 * through its platform and chat key (the gateway's own routing); without
 * one, a new `dashboard` chat starts.
 */
export function registerChatRoutes(app: FastifyInstance, deps: { gateway: GatewayClient }): void {
  app.post<{
    Body: { profile: string; sessionId?: string; content: string; clientId?: string };
  }>(
    "/api/chat",
    {
      schema: {
        body: {
          type: "object",
          required: ["profile", "content"],
          additionalProperties: false,
          properties: {
            profile: PROFILE,
            sessionId: { type: "string", minLength: 1, maxLength: 200 },
            content: { type: "string", minLength: 1, maxLength: 32_000 },
            clientId: { type: "string", minLength: 1, maxLength: 100 },
          },
        },
      },
    },
    async (request, reply) => {
      const { profile, sessionId, content } = request.body;
      const store = storesOf(request).reader(profile);
      let platform = CHAT_PLATFORM;
      let chat = `web-${randomUUID()}`;
      if (sessionId) {
        const session = await store.sessions.require(sessionId);
        if (!session.chatKey) {
          throw new HearthError(
            "HEARTH_BAD_REQUEST",
            `session ${sessionId} has no chat key: the gateway cannot route a message to it`,
            { hint: "start a new chat from the Chat page" },
          );
        }
        platform = session.source;
        chat = session.chatKey;
      }
      const base = deps.gateway.address(profile);
      const controller = new AbortController();
      // The browser went away before the answer ended: stop reading the gateway's stream
      // (the turn itself goes on there and is stored).
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      let res: Response;
      try {
        res = await fetch(`${base}/v1/messages`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            ...(await deps.gateway.headers(profile)),
          },
          body: JSON.stringify({
            platform,
            chat,
            content,
            profile,
            clientId: request.body.clientId ?? `dashboard-${randomUUID()}`,
            stream: true,
          }),
          signal: controller.signal,
        });
      } catch (err) {
        if (isHearthError(err)) throw err;
        throw new HearthError(
          "HEARTH_GATEWAY_UNREACHABLE",
          `the gateway of profile ${profile} (${base}) did not answer: ${String((err as Error).message ?? err)}`,
          { resource: profile, hint: "hearth ps shows whether it runs; its log says more" },
        );
      }
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as {
          error?: { code?: string; message?: string; hint?: string };
        };
        request.log.warn(
          { event: "dashboard.chat_refused", status: res.status, code: body.error?.code },
          "gateway refused the chat message",
        );
        const code = body.error?.code;
        // The gateway's own refusal (turn busy, responder failed, …) keeps its code; a
        // 401 there is the dashboard's token, not the browser's login.
        if (code && code in ERROR_CODES && code !== "HEARTH_UNAUTHORIZED" && body.error?.message) {
          throw new HearthError(
            code as HearthErrorCode,
            body.error.message,
            body.error.hint ? { hint: body.error.hint } : {},
          );
        }
        throw new HearthError(
          "HEARTH_GATEWAY_UNREACHABLE",
          `the gateway of profile ${profile} answered ${res.status}: ${body.error?.message ?? res.statusText}`,
          {
            resource: profile,
            ...(body.error?.code ? { details: { gatewayCode: body.error.code } } : {}),
            hint: body.error?.hint ?? "its log says more",
          },
        );
      }
      reply.hijack();
      reply.raw.writeHead(200, {
        ...SECURITY_HEADERS,
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      });
      try {
        for await (const chunk of res.body) reply.raw.write(chunk);
      } catch (err) {
        if (!controller.signal.aborted) {
          const error = new HearthError(
            "HEARTH_GATEWAY_UNREACHABLE",
            `the gateway's stream broke off: ${String((err as Error).message ?? err)}`,
          );
          reply.raw.write(`event: error\ndata: ${JSON.stringify({ error: error.toJSON() })}\n\n`);
        }
      }
      reply.raw.end();
      return reply;
    },
  );
}

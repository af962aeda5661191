import type { FastifyInstance } from "fastify";
import { HearthError } from "../../errors.js";
import {
  PERMISSION_ANSWERS,
  type PermissionAnswer,
  type PermissionRow,
} from "../../store/tool-permissions.js";
import { permissionDecided } from "../../turn/permission.js";
import type { RouteContext } from "../gateway-deps.js";
import { query } from "../message-body.js";

/** A permission request as clients see it (the SSE event and the routes). */
export function permissionView(r: PermissionRow) {
  return {
    sessionId: r.sessionId,
    toolCallId: r.callId,
    tool: r.tool,
    arguments: r.summary,
    requestedAt: new Date(r.requestedAt).toISOString(),
    deadline: new Date(r.deadlineAt).toISOString(),
    decision: r.decision,
  };
}

/**
 * Permission before a tool acts (docs/gateway.md#permission):
 * GET /v1/sessions/:id/permissions lists the calls waiting for an answer;
 * POST /v1/sessions/:id/permissions/:callId {decision} answers one. The
 * first decision stands (the deadline and a cancelled turn decide too);
 * the waiting turn, on this gateway or another, goes on.
 */
export function registerPermissionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { runtimeOf } = ctx;
  app.get<{ Params: { id: string } }>(
    "/v1/sessions/:id/permissions",
    { schema: { querystring: query({}) } },
    async (request) => {
      const runtime = runtimeOf(request);
      const session = await runtime.store.sessions.require(request.params.id);
      const pending = await runtime.store.toolPermissions.pending(session.id);
      return { profile: runtime.profile, permissions: pending.map(permissionView) };
    },
  );

  app.post<{ Params: { id: string; callId: string }; Body: { decision: PermissionAnswer } }>(
    "/v1/sessions/:id/permissions/:callId",
    {
      schema: {
        querystring: query({}),
        body: {
          type: "object",
          required: ["decision"],
          additionalProperties: false,
          properties: { decision: { type: "string", enum: [...PERMISSION_ANSWERS] } },
        },
      },
    },
    async (request) => {
      const runtime = runtimeOf(request);
      const permissions = runtime.store.toolPermissions;
      const { id, callId } = request.params;
      const session = await runtime.store.sessions.require(id);
      const asked = await permissions.get(session.id, callId);
      if (!asked)
        throw new HearthError(
          "HEARTH_PERMISSION_NOT_FOUND",
          `no call ${JSON.stringify(callId)} of session ${session.id} asked for permission`,
          { resource: callId, hint: `GET /v1/sessions/${session.id}/permissions lists them` },
        );
      if (asked.decision !== null) throw settled(asked);
      // Past its deadline the request is expired, even if no turn is there to record it.
      const late = permissions.now() >= asked.deadlineAt;
      const row = await permissions.decide(
        session.id,
        callId,
        late ? "expired" : request.body.decision,
      );
      permissionDecided(session.id, callId);
      if (!row || row.decision !== request.body.decision) throw settled(row ?? asked);
      return { profile: runtime.profile, permission: permissionView(row) };
    },
  );
}

function settled(row: PermissionRow): HearthError {
  return new HearthError(
    "HEARTH_PERMISSION_SETTLED",
    `the permission of call ${JSON.stringify(row.callId)} was already decided: ${row.decision}`,
    {
      resource: row.callId,
      hint: "the first decision stands; send the message again to retry the call",
      details: { decision: row.decision },
    },
  );
}

import * as acp from "@agentclientprotocol/sdk";
import { PERMISSION_ANSWERS, type PermissionAnswer } from "../store/tool-permissions.js";
import type { PermissionAsker } from "../turn/permission.js";
import { titleOf } from "./updates.js";

/** The choices an editor shows; each optionId is the hearth decision it records. */
const OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow in this session", kind: "allow_always" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

/**
 * Permission asked of the editor (`session/request_permission`, docs/acp.md):
 * the answer is recorded by the turn in the store like an HTTP client's
 * (allow_always becomes the session's grant). The request is withdrawn
 * (`$/cancel_request`) when the turn stops waiting (deadline, cancel). An
 * option hearth did not offer counts as a rejection; the editor's
 * `cancelled` outcome, as a cancelled call.
 */
export function editorAsker(client: acp.AgentContext, sessionId: string): PermissionAsker {
  return async (request, signal) => {
    let rawInput: unknown = request.summary;
    try {
      rawInput = JSON.parse(request.summary);
    } catch {
      // a cut summary stays text
    }
    const response = await client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId,
        toolCall: {
          toolCallId: request.callId,
          title: titleOf(request.tool, rawInput),
          status: "pending",
          rawInput,
        },
        options: OPTIONS,
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    if (response.outcome.outcome !== "selected") return undefined;
    const chosen = response.outcome.optionId;
    return (PERMISSION_ANSWERS as readonly string[]).includes(chosen)
      ? (chosen as PermissionAnswer)
      : "reject";
  };
}

import type { AgentInputItem } from "@openai/agents";
import type { Message, MessageRole, NewMessage } from "../../store/types.js";

/**
 * Agent items as hearth messages and back. An item is stored whole as the
 * message's JSON content (lossless: getItems returns what addItems was
 * given); role, name and toolCallId are filled in from it so that hearth's
 * own tools (dashboard, export, search) show the transcript sensibly.
 */
export function itemToMessage(item: AgentInputItem): NewMessage {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    throw new TypeError("every session item must be an object");
  }
  const fields = item as Record<string, unknown>;
  const callId = typeof fields.callId === "string" ? fields.callId : null;
  const name = typeof fields.name === "string" ? fields.name : null;
  return {
    role: roleOf(fields),
    content: fields,
    name,
    toolCallId: callId,
  };
}

/** A stored message as an agent item: adapter-written JSON as it was; plain text as a message item. */
export function messageToItem(message: Message): AgentInputItem {
  const { content } = message;
  if (typeof content !== "string") return content as unknown as AgentInputItem;
  switch (message.role) {
    case "user":
    case "system":
      return { role: message.role, content } as AgentInputItem;
    case "tool":
      return {
        type: "function_call_result",
        callId: message.toolCallId ?? "",
        name: message.name ?? "",
        status: "completed",
        output: content,
      } as AgentInputItem;
    default:
      return {
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: content }],
      } as AgentInputItem;
  }
}

function roleOf(fields: Record<string, unknown>): MessageRole {
  const role = fields.role;
  if (role === "user" || role === "assistant" || role === "system") return role;
  if (role === "developer") return "system";
  const type = typeof fields.type === "string" ? fields.type : "";
  // Results of tools (function, computer, shell, patch, ...) answer a call: "tool".
  if (type.endsWith("_result") || type.endsWith("_output")) return "tool";
  return "assistant";
}

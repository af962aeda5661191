import type * as acp from "@agentclientprotocol/sdk";
import type { Message } from "../store/types.js";
import { callsOf, statusOf, toolText } from "../turn/tool-records.js";

/**
 * Stored messages as ACP `session/update` payloads: the same shapes a live
 * turn streams, so a session loaded in another editor reads like it did
 * when it happened. Tool calls become `tool_call`, their results
 * `tool_call_update` (completed or failed); turn markers (failed,
 * cancelled) and a compaction's summary are agent text.
 */
export function updatesOf(m: Message): acp.SessionUpdate[] {
  if (m.role === "user") return [chunk("user_message_chunk", textOf(m), m)];
  if (m.role === "tool") return [toolResult(m)];
  // A compacted session starts from its summary: the editor reads it first.
  if (m.role === "system" && m.name === "summary")
    return [chunk("agent_message_chunk", `[summary of the earlier conversation]\n${textOf(m)}`, m)];
  if (m.role !== "assistant") return [];
  const updates: acp.SessionUpdate[] = [];
  const text = textOf(m);
  if (text !== "") updates.push(chunk("agent_message_chunk", text, m));
  for (const call of callsOf(m))
    updates.push(toolCall(call.id, call.function.name, call.function.arguments));
  return updates;
}

/**
 * A call the model made, as the editor first sees it: `pending` until it
 * runs (toolStarted), then completed or failed with its result (toolResult).
 */
export function toolCall(id: string, name: string, args: string): acp.SessionUpdate {
  let rawInput: unknown = args;
  try {
    rawInput = JSON.parse(args);
  } catch {
    // the model's arguments as they came
  }
  return {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: titleOf(name, rawInput),
    kind: name.startsWith("session_") ? "search" : "other",
    status: "pending",
    rawInput,
  };
}

export function toolStarted(id: string): acp.SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" };
}

/** The tool's name and its first text argument, short: `session_search: "the PIN"`. */
export function titleOf(name: string, input: unknown): string {
  if (typeof input !== "object" || input === null) return name;
  const first = Object.values(input).find((v): v is string => typeof v === "string" && v !== "");
  if (first === undefined) return name;
  const line = first.replace(/\s+/g, " ").trim();
  return `${name}: "${line.length > 60 ? `${line.slice(0, 59)}…` : line}"`;
}

export function toolResult(m: Message): acp.SessionUpdate {
  const status = statusOf(m);
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: m.toolCallId ?? "",
    status: status === "ok" ? "completed" : "failed",
    content: [{ type: "content", content: { type: "text", text: toolText(m) } }],
  };
}

function chunk(
  kind: "user_message_chunk" | "agent_message_chunk",
  text: string,
  m: Message,
): acp.SessionUpdate {
  return { sessionUpdate: kind, content: { type: "text", text }, messageId: String(m.id) };
}

function textOf(m: Message): string {
  if (typeof m.content === "string") return m.content;
  const c = m.content as {
    message?: unknown;
    turnFailed?: unknown;
    turnCancelled?: unknown;
    partial?: unknown;
  };
  if (c && (c.turnFailed || c.turnCancelled)) {
    // What the editor saw streamed before the stop, then the stop itself.
    const partial = typeof c.partial === "string" && c.partial !== "" ? `${c.partial}\n\n` : "";
    return `${partial}[${c.turnCancelled ? "cancelled" : "failed"}: ${String(c.message ?? "")}]`;
  }
  return JSON.stringify(m.content);
}

/** The prompt's content blocks as the text hearth stores. */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  return blocks
    .map((b) => {
      if (b.type === "text") return b.text;
      if (b.type === "resource_link") return `[resource: ${b.uri}]`;
      if (b.type === "resource")
        return "text" in b.resource
          ? `[resource ${b.resource.uri}]\n${b.resource.text}`
          : `[resource: ${b.resource.uri}]`;
      return `[${b.type} omitted]`;
    })
    .join("\n");
}

import { randomUUID } from "node:crypto";
import type { MetaCas } from "../store/meta.js";
import type { Message, NewMessage } from "../store/types.js";
import type { ToolOutcome, ToolStatus } from "./tools/execute.js";
import type { ToolCall } from "./tools/types.js";

/**
 * How a turn's steps are recorded (D7). The assistant's tool-call message
 * and each tool result (role `tool`, its call id in `toolCallId`) are
 * messages like any other. Just before a call runs, a meta row
 * `tool-start:<session>:<call>` says it started; the result's transaction
 * deletes it. So after a crash: a result means "done, never again"; a start
 * row without a result means "may have run"; neither means "never started".
 */
export const startKey = (sessionId: string, callId: string) => `tool-start:${sessionId}:${callId}`;

export function startRecord(tool: string, turnId: string): string {
  return JSON.stringify({ tool, turnId, pid: process.pid, at: Date.now() });
}

/** The result message of one call. */
export function resultMessage(call: ToolCall, outcome: ToolOutcome): NewMessage {
  return {
    role: "tool",
    name: call.function.name,
    toolCallId: call.id,
    content: { status: outcome.status, output: outcome.output },
  };
}

/**
 * The calls with ids unique in the transcript: some endpoints reuse ids
 * (`call_0` every round), and a result is paired with its call by id, so a
 * reused one gets a suffix before it is stored (and sent back as stored).
 */
export function uniqueIds(calls: readonly ToolCall[], transcript: readonly Message[]): ToolCall[] {
  const used = new Set(transcript.flatMap((m) => callsOf(m).map((c) => c.id)));
  return calls.map((c) => {
    let id = c.id;
    while (used.has(id)) id = `${c.id}_${randomUUID().slice(0, 8)}`;
    used.add(id);
    return id === c.id ? c : { ...c, id };
  });
}

/** The meta change that rides with a result: the start row goes. */
export function clearStart(sessionId: string, callId: string): MetaCas {
  return {
    key: startKey(sessionId, callId),
    decide: (current) => (current === null ? undefined : null),
  };
}

/** The tool calls of a message, when it is an assistant message that made some. */
export function callsOf(m: Message): ToolCall[] {
  if (m.role !== "assistant" || !Array.isArray(m.toolCalls)) return [];
  return m.toolCalls.filter(
    (c): c is ToolCall =>
      typeof c === "object" &&
      c !== null &&
      typeof (c as ToolCall).id === "string" &&
      typeof (c as ToolCall).function?.name === "string",
  );
}

/**
 * The calls of the transcript's last tool-call message that have no result
 * yet, when that message is the unfinished end of a turn (only tool results
 * follow it). Empty when the transcript ends anywhere else.
 */
export function pendingCalls(transcript: readonly Message[]): ToolCall[] {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role === "tool") continue;
    const calls = callsOf(m);
    if (calls.length === 0) return [];
    const done = new Set(transcript.slice(i + 1).map((r) => r.toolCallId));
    return calls.filter((c) => !done.has(c.id));
  }
  return [];
}

/** Whether the transcript ends inside a tool loop (a turn a crash left unfinished). */
export function endsMidLoop(transcript: readonly Message[]): boolean {
  const last = transcript[transcript.length - 1];
  return last !== undefined && (last.role === "tool" || callsOf(last).length > 0);
}

/** The status a stored tool result carries. */
export function statusOf(m: Message): ToolStatus | undefined {
  const c = m.content as { status?: unknown };
  return m.role === "tool" && typeof c === "object" && typeof c?.status === "string"
    ? (c.status as ToolStatus)
    : undefined;
}

/** What the model reads of a stored tool result. */
export function toolText(m: Message): string {
  const c = m.content as { status?: unknown; output?: unknown };
  if (typeof c !== "object" || c === null || typeof c.output !== "string")
    return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  return c.status === "ok" ? c.output : `[${String(c.status)}] ${c.output}`;
}

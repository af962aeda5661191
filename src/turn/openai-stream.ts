import { createParser } from "eventsource-parser";
import type { Message } from "../store/types.js";
import type { ResponderAnswer, Usage } from "./responder.js";
import { callsOf, toolText } from "./tool-records.js";
import type { ToolCall, ToolSpec } from "./tools/types.js";

interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChoice {
  delta?: { content?: string | null; tool_calls?: WireToolCall[] };
  message?: { content?: string | null; tool_calls?: WireToolCall[] };
}

/** A completion or a streamed chunk, as far as hearth reads it. */
export interface WireCompletion {
  model?: unknown;
  choices?: WireChoice[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

/**
 * Read a streamed chat completion: text deltas are concatenated (a final
 * event that arrives empty never replaces text that was streamed), and
 * tool-call deltas are assembled by their `index`: the first piece carries
 * the id and name, later pieces append to the arguments string.
 */
export async function readStream(
  body: ReadableStream<Uint8Array>,
  onDelta?: (text: string) => void,
): Promise<ResponderAnswer> {
  let streamed = "";
  let final: string | undefined;
  const calls = new Map<number, ToolCall>();
  let finalCalls: ToolCall[] | undefined;
  let usage: Usage | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === "[DONE]") return;
      let chunk: WireCompletion;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return;
      }
      // With stream_options.include_usage the last chunk (no choices) carries it.
      usage = usageOf(chunk) ?? usage;
      const choice = chunk.choices?.[0];
      const delta = choice?.delta?.content;
      if (delta) {
        streamed += delta;
        onDelta?.(delta);
      }
      for (const [i, piece] of (choice?.delta?.tool_calls ?? []).entries()) {
        const index = piece.index ?? i;
        const call = calls.get(index) ?? {
          id: "",
          type: "function" as const,
          function: { name: "", arguments: "" },
        };
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.function.name += piece.function.name;
        if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
        calls.set(index, call);
      }
      if (typeof choice?.message?.content === "string") final = choice.message.content;
      if (choice?.message?.tool_calls) finalCalls = toCalls(choice.message.tool_calls);
    },
  });
  const decoder = new TextDecoder();
  for await (const part of body as unknown as AsyncIterable<Uint8Array>)
    parser.feed(decoder.decode(part, { stream: true }));
  const content = final && final.length > 0 ? final : streamed;
  const toolCalls = finalCalls ?? [...calls.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  return withCalls(content, toolCalls, usage);
}

/** A complete (non-streamed) answer: its first choice and its usage. */
export function readCompletion(json: WireCompletion): ResponderAnswer {
  const message = json.choices?.[0]?.message;
  return withCalls(message?.content ?? "", toCalls(message?.tool_calls ?? []), usageOf(json));
}

/** An OpenAI-style `usage` (prompt_tokens, completion_tokens) and `model`, if well-formed. */
export function usageOf(json: WireCompletion): Usage | undefined {
  const u = json.usage;
  const count = (n: unknown) =>
    Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined;
  const tokensIn = count(u?.prompt_tokens);
  const tokensOut = count(u?.completion_tokens);
  if (tokensIn === undefined && tokensOut === undefined) return undefined;
  const model = typeof json.model === "string" && json.model.length <= 200 ? json.model : null;
  return { tokensIn: tokensIn ?? 0, tokensOut: tokensOut ?? 0, model };
}

function withCalls(content: string, toolCalls: ToolCall[], usage?: Usage): ResponderAnswer {
  const named = toolCalls.filter((c) => c.function.name !== "");
  // A call the model sent without an id still needs one to pair with its result.
  named.forEach((c, i) => {
    if (!c.id) c.id = `call_${Date.now().toString(36)}_${i}`;
  });
  return {
    content,
    ...(named.length > 0 ? { toolCalls: named } : {}),
    ...(usage ? { usage } : {}),
  };
}

function toCalls(wire: WireToolCall[]): ToolCall[] {
  return wire.map((w) => ({
    id: w.id ?? "",
    type: "function" as const,
    function: { name: w.function?.name ?? "", arguments: w.function?.arguments ?? "" },
  }));
}

/**
 * The transcript in chat-completions shape. A tool call left without a
 * result (a turn cut short before the next user message, whose results a
 * crash lost) is answered on the wire with an "interrupted" result, never
 * stored: endpoints refuse a tool call that has no tool message after it.
 */
export function toWire(transcript: readonly Message[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let open: string[] = [];
  const close = () => {
    for (const id of open)
      out.push({ role: "tool", tool_call_id: id, content: "[interrupted] no result was recorded" });
    open = [];
  };
  for (const m of transcript) {
    if (m.role === "tool") open = open.filter((id) => id !== m.toolCallId);
    else close();
    out.push(toChat(m));
    open.push(...callsOf(m).map((c) => c.id));
  }
  // Calls at the very end are the ones the loop is settling: nothing to add.
  return out;
}

/** A stored message in chat-completions shape (tool calls and results included). */
export function toChat(m: Message): Record<string, unknown> {
  if (m.role === "tool")
    return { role: "tool", tool_call_id: m.toolCallId ?? "", content: toolText(m) };
  const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  const calls = callsOf(m);
  return {
    role: m.role,
    content,
    // Endpoints accept only [A-Za-z0-9_-] names: hearth's markers (hearth.turn_failed) go without.
    ...(m.name && /^[A-Za-z0-9_-]{1,64}$/.test(m.name) ? { name: m.name } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** The `tools` field of a request. */
export function toWireTools(tools: readonly ToolSpec[]) {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import type { Message } from "../store/types.js";
import { OpenAiResponder } from "./openai.js";
import { ScriptedResponder } from "./scripted.js";
import type { ToolCall, ToolSpec } from "./tools/types.js";

export interface TurnInput {
  /** The live transcript, oldest first, ending with the new user message. */
  transcript: readonly Message[];
  signal: AbortSignal;
  /** Called with each piece of the reply as it streams. */
  onDelta?: (text: string) => void;
  /** The tools the model may call this time; absent means none. */
  tools?: readonly ToolSpec[];
}

/** The model's answer: text, and the tools it wants run before it answers again. */
export interface ResponderAnswer {
  content: string;
  toolCalls?: ToolCall[];
  /** What the endpoint reported spending on this answer, when it did. */
  usage?: Usage;
}

/** Tokens one answer cost, as the endpoint reported them, and the model that answered. */
export interface Usage {
  tokensIn: number;
  tokensOut: number;
  model: string | null;
}

/** The agent turn behind one interface: echo (built in) or an OpenAI-compatible endpoint. */
export interface Responder {
  readonly name: string;
  /** What the turn must load: the whole live transcript, or only the new message. */
  readonly context: "transcript" | "last";
  respond(input: TurnInput): Promise<ResponderAnswer>;
  /** A short title for a conversation from its first exchange, when the responder is a model (auto-title.ts). */
  title?(
    exchange: { question: string; reply: string },
    signal: AbortSignal,
  ): Promise<string | null>;
}

/** Replies with the user's words; works offline. Streams word by word. */
export class EchoResponder implements Responder {
  readonly name = "echo";
  readonly context = "last" as const;

  async respond(input: TurnInput): Promise<{ content: string }> {
    const last = input.transcript[input.transcript.length - 1];
    const text =
      typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
    const content = `echo: ${text}`;
    for (const piece of content.split(/(?<= )/)) input.onDelta?.(piece);
    return { content };
  }
}

export function createResponder(
  config: HearthConfig,
  env: NodeJS.ProcessEnv = process.env,
): Responder {
  const r = config.gateway.responder;
  if (r.kind === "echo") return new EchoResponder();
  if (r.kind === "script") return new ScriptedResponder(r.script ?? []);
  if (!r.baseUrl || !r.model) {
    throw new HearthError(
      "HEARTH_CONFIG_INVALID",
      'gateway.responder.kind "openai" needs gateway.responder.baseUrl and gateway.responder.model',
      {
        hint: '{"gateway": {"responder": {"kind": "openai", "baseUrl": "http://127.0.0.1:11434/v1", "model": "llama3"}}}',
      },
    );
  }
  return new OpenAiResponder({
    baseUrl: r.baseUrl,
    model: r.model,
    apiKey: env[r.apiKeyEnv],
    stream: r.stream,
    timeoutMs: r.timeoutMs,
  });
}

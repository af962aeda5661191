import { createParser } from "eventsource-parser";
import { HearthError } from "../errors.js";
import type { Message } from "../store/types.js";
import { deadline } from "./deadline.js";
import type { Responder, TurnInput } from "./responder.js";

export interface OpenAiOptions {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  stream: boolean;
  timeoutMs: number;
}

/**
 * Any OpenAI-compatible chat-completions endpoint. With streaming, the
 * reply is the concatenation of the deltas; a final event that arrives
 * empty never replaces text that was streamed.
 */
export class OpenAiResponder implements Responder {
  readonly name = "openai";
  readonly context = "transcript" as const;

  constructor(private readonly options: OpenAiOptions) {}

  async respond(input: TurnInput): Promise<{ content: string }> {
    const { timeoutMs } = this.options;
    const { signal, done } = deadline(
      input.signal,
      timeoutMs,
      `timed out: no answer within ${timeoutMs} ms`,
    );
    try {
      return await this.call(input, signal);
    } finally {
      done();
    }
  }

  private async call(input: TurnInput, signal: AbortSignal): Promise<{ content: string }> {
    const { baseUrl, model, apiKey, stream } = this.options;
    let response: Response;
    try {
      response = await fetch(`${baseUrl.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify({ model, stream, messages: input.transcript.map(toChat) }),
        signal,
      });
    } catch (err) {
      const reason = redact((err as Error).message, apiKey);
      throw responderError(`cannot reach ${endpointName(baseUrl)}: ${reason}`);
    }
    if (!response.ok) {
      // The body is never relayed: an endpoint (or a proxy in front of it)
      // may echo the request, key included. Only its error code is kept.
      const body = await response.text().catch(() => "");
      const code = upstreamCode(body);
      throw responderError(
        `${endpointName(baseUrl)} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${code ? ` (${code})` : ""}`,
      );
    }
    if (
      !stream ||
      !response.body ||
      !response.headers.get("content-type")?.includes("text/event-stream")
    ) {
      const json = (await response.json()) as { choices?: { message?: { content?: string } }[] };
      const content = json.choices?.[0]?.message?.content ?? "";
      input.onDelta?.(content);
      return { content };
    }
    return { content: await readStream(response.body, input.onDelta) };
  }
}

async function readStream(
  body: ReadableStream<Uint8Array>,
  onDelta?: (text: string) => void,
): Promise<string> {
  let streamed = "";
  let final: string | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === "[DONE]") return;
      let chunk: { choices?: { delta?: { content?: string }; message?: { content?: string } }[] };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return;
      }
      const choice = chunk.choices?.[0];
      const delta = choice?.delta?.content;
      if (delta) {
        streamed += delta;
        onDelta?.(delta);
      }
      if (typeof choice?.message?.content === "string") final = choice.message.content;
    },
  });
  const decoder = new TextDecoder();
  for await (const part of body as unknown as AsyncIterable<Uint8Array>)
    parser.feed(decoder.decode(part, { stream: true }));
  // Some servers send the whole message at the end; an empty one never wipes the streamed text.
  return final && final.length > 0 ? final : streamed;
}

function toChat(m: Message): { role: string; content: string; name?: string } {
  const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  return { role: m.role, content, ...(m.name ? { name: m.name } : {}) };
}

/** The endpoint as errors name it: scheme, host and path; never user info or a query string. */
export function endpointName(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "the configured endpoint";
  }
}

/** An OpenAI-style `error.code` or `error.type`, only if it is a short identifier. */
function upstreamCode(body: string): string | undefined {
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; type?: unknown } }).error;
    const code = typeof error?.code === "string" ? error.code : error?.type;
    return typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

function redact(text: string, secret: string | undefined): string {
  const cut = text.slice(0, 200);
  return secret ? cut.split(secret).join("[redacted]") : cut;
}

function responderError(message: string): HearthError {
  return new HearthError("HEARTH_RESPONDER_FAILED", `the responder failed: ${message}`, {
    hint: "check gateway.responder in config.json and that the endpoint is up; the failed turn is stored",
  });
}

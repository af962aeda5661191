import { HearthError } from "../errors.js";
import { deadline } from "./deadline.js";
import {
  readCompletion,
  readStream,
  toWire,
  toWireTools,
  type WireCompletion,
} from "./openai-stream.js";
import type { Responder, ResponderAnswer, TurnInput } from "./responder.js";

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

  async respond(input: TurnInput): Promise<ResponderAnswer> {
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

  private async call(input: TurnInput, signal: AbortSignal): Promise<ResponderAnswer> {
    const { baseUrl, model, apiKey, stream } = this.options;
    let response: Response;
    try {
      response = await fetch(`${baseUrl.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify({
          model,
          stream,
          // Endpoints that report usage send it in a last chunk only when asked.
          ...(stream ? { stream_options: { include_usage: true } } : {}),
          messages: toWire(input.transcript),
          ...(input.tools && input.tools.length > 0 ? { tools: toWireTools(input.tools) } : {}),
        }),
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
      const answer = readCompletion((await response.json()) as WireCompletion);
      if (answer.content || !answer.toolCalls) input.onDelta?.(answer.content);
      return answer;
    }
    return readStream(response.body, input.onDelta);
  }
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

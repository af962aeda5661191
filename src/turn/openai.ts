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
import { cleanTitle, TITLE_TIMEOUT_MS, titlePrompt } from "./title-prompt.js";

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
    const { model, stream } = this.options;
    const response = await this.post(
      {
        model,
        stream,
        // Endpoints that report usage send it in a last chunk only when asked.
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        messages: toWire(input.transcript),
        ...(input.tools && input.tools.length > 0 ? { tools: toWireTools(input.tools) } : {}),
      },
      signal,
    );
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

  /**
   * A short title for a conversation from its first exchange (issue 47):
   * one small non-streamed request, at most TITLE_TIMEOUT_MS. Null when
   * the model gave nothing usable; throws HEARTH_RESPONDER_FAILED when the
   * endpoint failed. The caller falls back to the heuristic either way.
   */
  async title(
    exchange: { question: string; reply: string },
    parent: AbortSignal,
  ): Promise<string | null> {
    const ms = Math.min(this.options.timeoutMs, TITLE_TIMEOUT_MS);
    const { signal, done } = deadline(parent, ms, `timed out: no title within ${ms} ms`);
    try {
      const response = await this.post(
        {
          model: this.options.model,
          stream: false,
          max_tokens: 24,
          messages: titlePrompt(exchange),
        },
        signal,
      );
      return cleanTitle(readCompletion((await response.json()) as WireCompletion).content);
    } finally {
      done();
    }
  }

  /** POST a chat completion; an unreachable endpoint or a non-2xx answer is HEARTH_RESPONDER_FAILED. */
  private async post(body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    const { baseUrl, apiKey } = this.options;
    let response: Response;
    try {
      response = await fetch(`${baseUrl.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      const reason = redact((err as Error).message, apiKey);
      throw responderError(`cannot reach ${endpointName(baseUrl)}: ${reason}`);
    }
    if (!response.ok) {
      // The body is never relayed: an endpoint (or a proxy in front of it)
      // may echo the request, key included. Only its error code is kept.
      const text = await response.text().catch(() => "");
      const code = upstreamCode(text);
      throw responderError(
        `${endpointName(baseUrl)} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${code ? ` (${code})` : ""}`,
      );
    }
    return response;
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

import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { answerStream, type FakeRequest, startFakeOpenAi } from "./gateway.js";

export interface ScriptedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * A streamed chat-completions answer that calls tools the way OpenAI streams
 * them: the first delta of each call carries its id and name, the arguments
 * arrive in two pieces.
 */
export function answerToolCalls(res: ServerResponse, calls: ScriptedCall[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: unknown) =>
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`);
  calls.forEach((c, index) => {
    const args = JSON.stringify(c.arguments);
    const half = Math.floor(args.length / 2);
    chunk({
      tool_calls: [
        {
          index,
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: args.slice(0, half) },
        },
      ],
    });
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  res.end("data: [DONE]\n\n");
}

/** The messages of a request to the fake that carry tool results. */
export function toolResults(
  req: FakeRequest,
): { role: string; tool_call_id?: string; content: string }[] {
  return (req.body.messages ?? []).filter((m) => m.role === "tool") as {
    role: string;
    tool_call_id?: string;
    content: string;
  }[];
}

/**
 * A fake model that calls `calls` while the transcript has no tool result
 * after its last user message, and answers `final` once it has.
 */
export async function toolFake(calls: ScriptedCall[], final = "done with tools") {
  return startFakeOpenAi((req, res) => {
    const messages = req.body.messages ?? [];
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    if (messages.slice(lastUser).some((m) => m.role === "tool")) answerStream(res, [final]);
    else answerToolCalls(res, calls);
  });
}

/** The non-empty lines of `file` (0 when it does not exist): how many times a test tool really ran. */
export function linesIn(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

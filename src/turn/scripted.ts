import type { Message } from "../store/types.js";
import type { Responder, ResponderAnswer, TurnInput } from "./responder.js";

export interface ScriptStep {
  content: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[] | undefined;
  chunkDelayMs: number;
}

/**
 * A responder that plays a script (responder kind "script"): for tests and
 * demos without a model. Which step answers is read from the transcript,
 * not from a counter, so a process restarted mid-turn picks up where the
 * turn stopped: the step index is the number of assistant messages since
 * the last user message, so step 0 answers the user, step 1 answers the
 * first tool results, and so on (the last step repeats). Content streams
 * word by word, `chunkDelayMs` apart, and the wait ends on abort.
 */
export class ScriptedResponder implements Responder {
  readonly name = "script";
  readonly context = "transcript" as const;

  constructor(private readonly steps: readonly ScriptStep[]) {}

  async respond(input: TurnInput): Promise<ResponderAnswer> {
    const index = Math.min(stepIndex(input.transcript), this.steps.length - 1);
    const step = this.steps[index] ?? { content: "", chunkDelayMs: 0 };
    for (const piece of step.content.split(/(?<= )/)) {
      if (step.chunkDelayMs > 0) await sleep(step.chunkDelayMs, input.signal);
      input.signal.throwIfAborted();
      if (piece !== "") input.onDelta?.(piece);
    }
    const calls = input.tools && input.tools.length > 0 ? (step.toolCalls ?? []) : [];
    if (calls.length === 0) return { content: step.content };
    const base = input.transcript[input.transcript.length - 1]?.id ?? 0;
    return {
      content: step.content,
      toolCalls: calls.map((c, i) => ({
        id: `call_${base}_${index}_${i}`,
        type: "function" as const,
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      })),
    };
  }
}

function stepIndex(transcript: readonly Message[]): number {
  let n = 0;
  for (let i = transcript.length - 1; i >= 0 && transcript[i]!.role !== "user"; i--)
    if (transcript[i]!.role === "assistant") n++;
  return n;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

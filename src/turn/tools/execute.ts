import { HearthError } from "../../errors.js";
import { deadline } from "../deadline.js";
import type { Tool, ToolCall, ToolContext } from "./types.js";

/** How a tool call ended, as stored in its result message (role `tool`). */
export type ToolStatus = "ok" | "error" | "timeout" | "interrupted" | "cancelled" | "denied";

export interface ToolOutcome {
  status: ToolStatus;
  output: string;
}

/**
 * Run one call with the limits: a timeout (the tool's signal aborts and the
 * call ends even if the tool ignores it), an output cap in UTF-8 bytes, and
 * every failure turned into an outcome, never thrown.
 */
export async function executeTool(
  tool: Tool | undefined,
  call: ToolCall,
  ctx: Omit<ToolContext, "signal" | "settings"> & {
    signal: AbortSignal;
    settings: Record<string, unknown>;
  },
  limits: { timeoutMs: number; maxOutputBytes: number },
): Promise<ToolOutcome> {
  if (!tool) return { status: "error", output: `no tool named ${call.function.name} is enabled` };
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.function.arguments || "{}") as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new TypeError("the arguments are not a JSON object");
    args = parsed as Record<string, unknown>;
  } catch (err) {
    return { status: "error", output: `invalid arguments: ${(err as Error).message}` };
  }
  const { signal, done } = deadline(
    ctx.signal,
    limits.timeoutMs,
    `tool ${tool.name} timed out after ${limits.timeoutMs} ms`,
    "HEARTH_RESPONDER_FAILED",
  );
  try {
    const value = await new Promise<unknown>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      tool.run(args, { ...ctx, signal }).then(resolve, reject);
    });
    const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
    return { status: "ok", output: cap(text, limits.maxOutputBytes) };
  } catch (err) {
    if (ctx.signal.aborted) return { status: "cancelled", output: "the turn was cancelled" };
    if (signal.aborted)
      return { status: "timeout", output: `timed out after ${limits.timeoutMs} ms` };
    const message = err instanceof HearthError || err instanceof Error ? err.message : String(err);
    return { status: "error", output: cap(message, limits.maxOutputBytes) };
  } finally {
    done();
  }
}

/** Cut `text` to at most `max` UTF-8 bytes (on a character boundary), saying so. */
export function cap(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  const note = `\n[output cut: ${bytes.length} bytes, limit ${max}]`;
  const keep = Math.max(0, max - Buffer.byteLength(note));
  // Decoding a cut buffer may end in U+FFFD; drop that partial character.
  const head = bytes
    .subarray(0, keep)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  return head + note;
}

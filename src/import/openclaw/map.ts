/**
 * One OpenClaw transcript entry as hearth stores it. A `message` entry's
 * content blocks become text, tool calls and reasoning; a `compaction`
 * entry's summary becomes a system message; every other entry type and
 * content block is counted in the tally, never dropped silently.
 */
import type { ImportedMessage } from "../../store/imports.js";
import { MAX_METADATA_BYTES } from "../../store/metadata.js";
import type { JsonObject, MessageRole } from "../../store/types.js";
import type { Tally } from "../source.js";

export const OPENCLAW_PREFIX = "openclaw:";

type Entry = Record<string, unknown>;

/** Epoch milliseconds from a number (ms) or an ISO string, else undefined. */
export function timeOf(value: unknown): number | undefined {
  const ms =
    typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isSafeInteger(Math.round(ms)) && ms > 631_152_000_000 && ms < 7_258_118_400_000
    ? Math.round(ms)
    : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The message of `entry`, or null when it has no home (tallied). `state`
 * says whether it is on the transcript's live branch, and how it left it.
 */
export function mapEntry(
  entry: Entry,
  clientId: string,
  fallbackAt: number,
  state: { active: boolean; archivedReason: "rewind" | "compaction" | null },
  tally: Tally,
): ImportedMessage | null {
  const at =
    timeOf((entry.message as Entry | undefined)?.timestamp) ??
    timeOf(entry.timestamp) ??
    fallbackAt;
  const openclaw: JsonObject = { id: String(entry.id ?? clientId.slice(OPENCLAW_PREFIX.length)) };
  const base = { clientId, createdAt: at, ...state };
  if (entry.type === "compaction") {
    const summary = typeof entry.summary === "string" ? entry.summary : "";
    openclaw.type = "compaction";
    return { ...base, role: "system", content: summary, metadata: { openclaw } };
  }
  if (entry.type !== "message" || !isObject(entry.message)) {
    tally.add(`entry ${String(entry.type)}`);
    return null;
  }
  const m = entry.message;
  const role = m.role === "toolResult" ? "tool" : String(m.role);
  if (!["user", "assistant", "tool", "system"].includes(role)) {
    tally.add(`message role ${role}`);
    return null;
  }
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: unknown[] = [];
  if (typeof m.content === "string") texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const block of m.content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
      else if (block.type === "thinking" && typeof block.thinking === "string")
        thinking.push(block.thinking);
      else if (block.type === "toolCall")
        toolCalls.push({
          id: String(block.id ?? ""),
          type: "function",
          function: {
            name: String(block.name ?? ""),
            arguments:
              typeof block.arguments === "string"
                ? block.arguments
                : JSON.stringify(block.arguments ?? {}),
          },
        });
      else tally.add(`content block ${String(block.type)}`);
    }
  }
  for (const [key, value] of [
    ["stopReason", m.stopReason],
    ["model", m.model],
    ["isError", m.isError],
  ] as const)
    if (value !== undefined && value !== null && value !== false)
      openclaw[key] = value as string | boolean;
  if (thinking.length > 0) {
    openclaw.reasoning = thinking.join("\n");
    if (Buffer.byteLength(JSON.stringify({ openclaw }), "utf8") > MAX_METADATA_BYTES) {
      delete openclaw.reasoning;
      tally.add("content block thinking (over the 16 KiB metadata limit)");
    }
  }
  const usage = isObject(m.usage) ? m.usage : undefined;
  const count = (v: unknown) =>
    Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;
  const text = texts.join("\n");
  return {
    ...base,
    role: role as MessageRole,
    content: text === "" && role === "assistant" && toolCalls.length > 0 ? null : text,
    toolCalls: role === "assistant" && toolCalls.length > 0 ? toolCalls : null,
    toolCallId: role === "tool" && typeof m.toolCallId === "string" ? m.toolCallId : null,
    name: role === "tool" && typeof m.toolName === "string" ? m.toolName : null,
    tokensIn: usage ? count(usage.input) : null,
    tokensOut: usage ? count(usage.output) : null,
    metadata: { openclaw },
  };
}

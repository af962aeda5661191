import type { HearthConfig } from "../config/schema.js";
import type { Store } from "../store/api.js";
import type { Message } from "../store/types.js";
import type { Responder } from "./responder.js";
import { callsOf, toolText } from "./tool-records.js";

/** The instruction the responder gets to write a compaction summary. */
export const SUMMARY_PROMPT =
  "Summarize this conversation for your own memory: the facts, decisions and open questions, in a few sentences.";

/** Said before the summary of the earlier parts, when a conversation is summarized in parts. */
const SO_FAR = "Summary of the conversation before this part:";

/**
 * Tokens a text costs, estimated without a tokenizer and on the high side:
 * a token per 3 characters (English averages about 4; code, numbers and
 * other scripts run closer to 3), plus a few for a message's framing.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3) + 4;
}

/**
 * Compaction (D4): the live transcript becomes history and the session
 * restarts from a summary the responder writes, in one transaction. The
 * transcript is summarized in windows (gateway.compactionWindowTokens):
 * each request carries the instruction, the summary of the windows before
 * it, and as many messages as fit, so no request exceeds the budget
 * whatever the session's length (a message longer than a window is cut).
 * Nothing is committed until the last window's summary is written: a
 * failed request leaves the session as it was. With
 * gateway.checkpointRequired it only happens once an export has confirmed
 * the archive up to the last message (meta `checkpoint:<session>`).
 * Returns false when it was deferred (or the summary came back empty).
 */
export async function compactSession(
  store: Store,
  sessionId: string,
  deps: { responder: Responder; config: HearthConfig; signal: AbortSignal },
): Promise<boolean> {
  const transcript = await store.messages.load(sessionId);
  const last = transcript[transcript.length - 1];
  if (!last) return false;
  if (deps.config.gateway.checkpointRequired) {
    const confirmed = Number((await store.meta.get(`checkpoint:${sessionId}`)) ?? -1);
    if (confirmed < last.id) return false;
  }
  const budget = deps.config.gateway.compactionWindowTokens;
  let summary = "";
  for (const window of summaryWindows(transcript.map(lineOf), budget)) {
    const request = summaryRequest(window, summary, budget);
    const { content } = await deps.responder.respond({
      transcript: [
        {
          ...last,
          id: -1,
          ordinal: last.ordinal + 1,
          role: "user",
          content: request,
          name: null,
          toolCalls: null,
          toolCallId: null,
        },
      ],
      signal: deps.signal,
    });
    if (content.trim() === "") return false; // never replace a transcript with nothing
    summary = content;
  }
  await store.messages.compact(sessionId, { content: summary });
  return true;
}

/** One message as a line of the text the summarizer reads. */
function lineOf(m: Message): string {
  if (m.role === "tool") return `[tool ${m.name ?? ""}] ${toolText(m)}`;
  const text =
    typeof m.content === "string" ? m.content : m.content === null ? "" : JSON.stringify(m.content);
  const calls = callsOf(m).map((c) => ` [calls ${c.function.name}(${c.function.arguments})]`);
  return `[${m.role}] ${text}${calls.join("")}`;
}

/**
 * The lines in windows: each holds as many whole lines as fit in half the
 * budget (the other half is the instruction, the summary so far and the
 * answer's room); a line longer than that is cut to fit, alone.
 */
export function summaryWindows(lines: readonly string[], budget: number): string[][] {
  const room = Math.floor(budget / 2);
  const windows: string[][] = [];
  let window: string[] = [];
  let used = 0;
  for (const whole of lines) {
    const line = cutToTokens(whole, room);
    const cost = estimateTokens(line);
    if (window.length > 0 && used + cost > room) {
      windows.push(window);
      window = [];
      used = 0;
    }
    window.push(line);
    used += cost;
  }
  if (window.length > 0) windows.push(window);
  return windows;
}

/** The text of one summary request: instruction, the summary so far (cut to a quarter of the budget), the window. */
export function summaryRequest(window: readonly string[], soFar: string, budget: number): string {
  const parts = [SUMMARY_PROMPT];
  if (soFar !== "") parts.push(`${SO_FAR}\n${cutToTokens(soFar, Math.floor(budget / 4))}`);
  parts.push(`The conversation${soFar === "" ? "" : " (continued)"}:\n${window.join("\n")}`);
  return parts.join("\n\n");
}

/** `text` cut so that estimateTokens() of it is at most `tokens`, saying so. */
function cutToTokens(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  const note = " [cut]";
  return text.slice(0, Math.max(0, (tokens - 4) * 3 - note.length)) + note;
}

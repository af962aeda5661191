/**
 * The auxiliary request that titles a session (issue 47): the first
 * exchange, cut short, and an instruction to answer with a title alone.
 */

/** The longest a title request may take (or the responder's timeoutMs, if shorter). */
export const TITLE_TIMEOUT_MS = 15_000;

/** How much of the question and the reply the title request sends. */
const EXCERPT = 2000;

/** The longest title kept from a model (the store allows 200). */
const MAX_TITLE = 80;

export function titlePrompt(exchange: { question: string; reply: string }) {
  return [
    {
      role: "system",
      content:
        "Write a short title (at most 6 words) for the conversation below, in its language. Answer with the title only: no quotes, no punctuation at the end.",
    },
    {
      role: "user",
      content: `User: ${exchange.question.slice(0, EXCERPT)}\n\nAssistant: ${exchange.reply.slice(0, EXCERPT)}`,
    },
  ];
}

/**
 * A model's answer as a title: its first non-empty line, quotes, a
 * "Title:" prefix, markdown marks and a final period dropped, whitespace
 * collapsed; null when nothing readable is left or it is too long to be a
 * title.
 */
export function cleanTitle(answer: string): string | null {
  const line = answer
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (!line) return null;
  const title = line
    .replace(/^(#+\s*)?(title\s*:\s*)?/i, "")
    .replace(/[*_`]/g, "")
    .replace(/^["'“‘«]+|["'”’»]+$/gu, "")
    .replace(/[.]+$/, "")
    .replace(/\s+/g, " ")
    .trim();
  if (!/[\p{L}\p{N}]/u.test(title) || title.length > MAX_TITLE) return null;
  return title;
}

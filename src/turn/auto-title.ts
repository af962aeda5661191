import type { Store } from "../store/api.js";
import type { Session } from "../store/types.js";

/** The longest automatic title, in characters (a word boundary before it when there is one). */
const MAX = 60;

/**
 * A session's title from its first message, without a model: the first
 * line or sentence of the text, markdown marks, links and code fences
 * dropped, whitespace collapsed, cut at a word before MAX characters.
 * Null when nothing readable is left (JSON content, only code, only marks).
 */
export function titleFromText(content: unknown): string | null {
  if (typeof content !== "string") return null;
  const text = content
    .replace(/```[\s\S]*?(```|$)/g, " ") // code blocks say little about the topic
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // [text](url) → text
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, "") // headings, quotes, list marks
    .replace(/[*_~]{1,3}(\S[^*_~]*?)[*_~]{1,3}/g, "$1");
  const line = text
    .split(/\n/)
    .map((l) => l.trim())
    .find((l) => /[\p{L}\p{N}]/u.test(l));
  if (!line) return null;
  const sentence = (/^(.+?[.!?])(\s|$)/u.exec(line)?.[1] ?? line).replace(/\s+/g, " ").trim();
  if (sentence.length <= MAX) return sentence.replace(/[.]$/, "");
  const cut = sentence.slice(0, MAX);
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, "")}…`;
}

/**
 * After a session's first exchange: give it an automatic title (source
 * `auto`) from the first message. Never over a title a user gave (the
 * store's rename keeps a `user` title, titleStays), never blocking or
 * failing the turn: the caller does not wait, and a failure is only logged.
 */
export async function autoTitle(store: Store, session: Session, content: unknown): Promise<void> {
  if (session.title !== null || session.messageCount > 0) return;
  const title = titleFromText(content);
  if (title === null) return;
  await store.sessions.rename(session.id, title, "auto");
}

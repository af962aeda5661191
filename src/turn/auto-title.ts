import type { Store } from "../store/api.js";
import type { Session } from "../store/types.js";
import type { Responder } from "./responder.js";

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

/** Who wrote an automatic title: the model (one auxiliary request) or the heuristic above. */
export type TitledBy = "model" | "heuristic";

export interface AutoTitleOptions {
  /** A responder with `title` (a model) is asked first; the heuristic is the fallback. */
  responder?: Pick<Responder, "title">;
  /** The first reply's text, sent with the question to the model. */
  reply?: string;
  /** Aborts the model's request (the process stopping). */
  signal?: AbortSignal;
  /** Called when the model failed and the heuristic titled the session instead. */
  onModelFailed?: (err: Error) => void;
}

/**
 * After a session's first exchange: give it an automatic title (source
 * `auto`): the model's when the responder is one (one short request,
 * recorded as `titledBy: "model"` in the session's metadata), else, or when
 * that fails, the heuristic's from the first message. Never over a title a
 * user gave, even one given while the model was asked (the store's rename
 * keeps a `user` title, titleStays), never blocking or failing the turn:
 * the caller does not wait, and a failure is only logged. Returns who
 * titled the session, "kept" when a user's title came first, null when
 * there was nothing to do.
 */
export async function autoTitle(
  store: Store,
  session: Pick<Session, "id" | "title" | "messageCount">,
  content: unknown,
  options: AutoTitleOptions = {},
): Promise<TitledBy | "kept" | null> {
  if (session.title !== null || session.messageCount > 0) return null;
  const { responder, reply, signal, onModelFailed } = options;
  let title: string | null = null;
  let by: TitledBy = "heuristic";
  if (responder?.title && typeof content === "string") {
    try {
      title = await responder.title(
        { question: content, reply: reply ?? "" },
        signal ?? new AbortController().signal,
      );
      by = "model";
    } catch (err) {
      onModelFailed?.(err as Error);
    }
  }
  if (title === null) {
    title = titleFromText(content);
    by = "heuristic";
  }
  if (title === null) return null;
  // Who titled it is merged into the metadata by the rename's own write: a
  // second write of a copy read before would undo another writer's change.
  let after: Session;
  try {
    after = await store.sessions.rename(session.id, title, "auto", {
      metadata: { titledBy: by },
    });
  } catch (err) {
    // Metadata too full to take the key: the title alone.
    if (!(err instanceof RangeError)) throw err;
    after = await store.sessions.rename(session.id, title, "auto");
  }
  // A person titled it meanwhile: theirs stays.
  if (after.titleSource !== "auto" || after.title !== title) return "kept";
  return by;
}

/**
 * The rules of creating and titling a session, whatever the backend: the
 * checks of a new session's fields, the refusals (a taken id, an unknown
 * parent, a taken title, a missing session) and the title rule shared by
 * create() and rename(). Each backend runs its insert and update inside its
 * own transaction and calls these from there.
 */
import { nodeCrypto } from "../builtins.js";
import { HearthError } from "../errors.js";
import { checkOwnerId, serializeMetadata } from "./metadata.js";
import type { NewSession, Session, TitleSource } from "./types.js";

/** Options of calls that can wait for the write lock. */
export interface CreateOptions {
  /** Abort the wait for the write lock: HEARTH_ABORTED, nothing written. */
  signal?: AbortSignal;
}

/** A new session's fields, checked: what a backend inserts. */
export interface SessionInsert {
  id: string;
  source: string;
  chatKey: string | null;
  title: string | null;
  titleSource: TitleSource | null;
  parentId: string | null;
  ownerId: string | null;
  /** Serialized JSON, or null. */
  metadata: string | null;
}

/** The fields of `input` checked (TypeError/RangeError) and defaulted; a fresh id when none is given. */
export function sessionInsert(input: NewSession): SessionInsert {
  if (input === null || typeof input !== "object") throw new TypeError("input must be an object");
  const id = input.id ?? nodeCrypto().randomUUID();
  if (typeof id !== "string" || id === "" || id.length > 200) {
    throw new TypeError("id must be a non-empty string of at most 200 characters");
  }
  const title = normalizeTitle(input.title);
  const titleSource = title === null ? null : (input.titleSource ?? "user");
  const ownerId = checkOwnerId(input.ownerId, "ownerId");
  const metadata = serializeMetadata(input.metadata, "metadata");
  const parentId = input.parentId ?? null;
  if (parentId !== null && typeof parentId !== "string") {
    throw new TypeError("parentId must be a string or null");
  }
  const source = input.source ?? "cli";
  const chatKey = input.chatKey ?? null;
  return { id, source, chatKey, title, titleSource, parentId, ownerId, metadata };
}

/**
 * A creation found `existing` stored under its id (inside its transaction):
 * with `getOrCreate` the stored session is the answer, as it is; otherwise
 * HEARTH_SESSION_EXISTS.
 */
export function adoptExisting(existing: Session, getOrCreate: boolean | undefined): Session {
  if (getOrCreate) return existing;
  throw new HearthError(
    "HEARTH_SESSION_EXISTS",
    `a session with id ${JSON.stringify(existing.id)} already exists`,
    {
      resource: existing.id,
      hint: "use sessions.getOrCreate() to adopt it, or omit the id to get a fresh one",
    },
  );
}

/** HEARTH_UNKNOWN_PARENT: a creation's parentId names no session. */
export function unknownParent(parentId: string): HearthError {
  return new HearthError(
    "HEARTH_UNKNOWN_PARENT",
    `parentId ${JSON.stringify(parentId)} names no session`,
    { resource: parentId, hint: "create the parent first, or pass parentId: null" },
  );
}

export function sessionNotFound(id: string): HearthError {
  return new HearthError("HEARTH_SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}`, {
    resource: id,
    hint: "hearth sessions list   # shows the ids",
  });
}

export function normalizeTitle(title: string | null | undefined): string | null {
  if (title === null || title === undefined) return null;
  if (typeof title !== "string") throw new TypeError("title must be a string or null");
  const trimmed = title.trim().replace(/\s+/g, " ");
  if (trimmed.length > 200) throw new RangeError("title must be at most 200 characters");
  return trimmed === "" ? null : trimmed;
}

/** An automatic title never replaces one a user gave: true when `current` keeps its title. */
export function titleStays(current: Pick<Session, "titleSource">, source: TitleSource): boolean {
  return source === "auto" && current.titleSource === "user";
}

/** HEARTH_TITLE_TAKEN: another visible session holds `title` (`cause`: the database's refusal). */
export function titleTaken(title: string | null, cause: unknown): HearthError {
  return new HearthError(
    "HEARTH_TITLE_TAKEN",
    `another visible session is already titled ${JSON.stringify(title)}`,
    {
      resource: title ?? "",
      hint: "choose another title, or archive the other session",
      cause,
    },
  );
}

/**
 * The titles a write tries, in order: `title`, then (with `suffix`, for an
 * automatic title) "title (2)", "title (3)", ... up to 1000. A user title
 * that is taken is HEARTH_TITLE_TAKEN, never renamed.
 */
export class TitleTries {
  /** The title to write next. */
  candidate: string | null;
  private n = 2;

  constructor(
    private readonly title: string | null,
    private readonly suffix: boolean,
  ) {
    this.candidate = title;
  }

  /**
   * The write of `candidate` failed with `err`; `taken` says whether the
   * database refused it as a taken title. Moves to the next candidate, or
   * throws: `err` itself when it is not a taken title, HEARTH_TITLE_TAKEN
   * when no other candidate may be tried.
   */
  refused(err: unknown, taken: boolean): void {
    if (!taken) throw err;
    if (!this.suffix || this.n > 1000) throw titleTaken(this.candidate, err);
    this.candidate = `${this.title} (${this.n++})`;
  }
}

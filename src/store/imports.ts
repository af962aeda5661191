/**
 * Writing history that was lived elsewhere (hearth import): a session with
 * its own times and flags, and its messages with their own times and
 * archived states, whatever the backend. Idempotent by construction: a
 * session id that exists is adopted, a message whose clientId the session
 * already holds is not inserted again (its archived state follows the
 * source's), so a rerun after a crash at any instant ends where one
 * uninterrupted run would have. Each write() is one transaction.
 */
import { requireString } from "./args.js";
import { type PreparedMessage, prepare } from "./message-input.js";
import { serializeMetadata } from "./metadata.js";
import type { Redactor } from "./redaction.js";
import { normalizeTitle } from "./session-create.js";
import type { JsonObject, NewMessage, TitleSource } from "./types.js";

/** A session as it was at its source: every time and flag given, none defaulted to now. */
export interface ImportedSession {
  id: string;
  source: string;
  chatKey: string | null;
  title: string | null;
  titleSource: TitleSource | null;
  /** Epoch milliseconds. */
  createdAt: number;
  endedAt: number | null;
  endReason: string | null;
  /** A session imported before this one (parents first), else null. */
  parentId: string | null;
  ownerId: string | null;
  pinned: boolean;
  archived: boolean;
  hidden: boolean;
  metadata: JsonObject | null;
}

/** A message as it was at its source: its clientId names it for every later run. */
export interface ImportedMessage extends NewMessage {
  clientId: string;
  createdAt: number;
  /** false: history (rewound or compacted at the source). */
  active: boolean;
  archivedReason: "rewind" | "compaction" | null;
}

/** A session checked and serialised for a backend's insert. */
export interface ImportSessionRow extends Omit<ImportedSession, "metadata"> {
  metadata: string | null;
}

/** A message prepared for a backend's insert, with the archived state it has at the source. */
export interface ImportMessageRow {
  message: PreparedMessage;
  active: boolean;
  archivedReason: "rewind" | "compaction" | null;
}

/** What one write() did. */
export interface ImportWriteResult {
  /** The session row was created by this write (false: it was there already). */
  created: boolean;
  /** The title stored when it was created (a taken title gets " (2)", " (3)"...); null otherwise. */
  storedTitle: string | null;
  inserted: number;
  /** Messages already stored under their clientId: not inserted again. */
  skipped: number;
  /** Stored messages whose archived state was changed to the source's. */
  restated: number;
}

/** A write's result before its messages: whether it created the session, and with which title. */
export function importResult(created: string | null | undefined): ImportWriteResult {
  return {
    created: created !== undefined,
    storedTitle: created ?? null,
    inserted: 0,
    skipped: 0,
    restated: 0,
  };
}

/** What a backend does for Imports: each write() one transaction. */
export interface ImportsSql {
  /** A backend's own refusal of a prepared message (PostgreSQL: text holding NUL). */
  refuse?(m: PreparedMessage): void;
  write(
    session: ImportSessionRow,
    messages: readonly ImportMessageRow[],
  ): Promise<ImportWriteResult>;
}

/** The columns of an imported session's INSERT, in the order of importSessionValues(). */
export const IMPORT_SESSION_COLUMNS =
  "id, profile, source, chat_key, title, title_source, created_at, ended_at, end_reason, parent_id, pinned, archived, hidden, owner_id, metadata, updated_at, last_activity_at";

/** The values of an imported session's row, for IMPORT_SESSION_COLUMNS: updated and active when created. */
export function importSessionValues(
  s: ImportSessionRow,
  profile: string,
  title: string | null,
  parentId: string | null,
): unknown[] {
  return [
    s.id,
    profile,
    s.source,
    s.chatKey,
    title,
    s.titleSource,
    s.createdAt,
    s.endedAt,
    s.endReason,
    parentId,
    s.pinned ? 1 : 0,
    s.archived ? 1 : 0,
    s.hidden ? 1 : 0,
    s.ownerId,
    s.metadata,
    s.createdAt,
    s.createdAt,
  ];
}

/** The most messages one write() takes. */
export const MAX_IMPORT_BATCH = 10_000;

export class Imports {
  constructor(
    private readonly sql: ImportsSql,
    /** The profile's redaction (redaction.ts), applied as on every append. */
    private readonly redact?: Redactor,
  ) {}

  /**
   * In one transaction: create `session` when no session has its id
   * (parent missing: stored without one), then append each message whose
   * clientId the session does not hold yet, after the messages it holds,
   * in the order given. A message it holds takes the source's archived
   * state. Every input is checked before the transaction starts.
   */
  async write(
    session: ImportedSession,
    messages: readonly ImportedMessage[],
  ): Promise<ImportWriteResult> {
    const row = sessionRow(session);
    if (!Array.isArray(messages)) throw new TypeError("messages must be an array");
    if (messages.length > MAX_IMPORT_BATCH)
      throw new RangeError(
        `at most ${MAX_IMPORT_BATCH} messages per write, got ${messages.length}`,
      );
    const rows = messages.map((m, i) => this.row(m, i));
    return this.sql.write(row, rows);
  }

  /** `message` as write() would store it (redacted, serialised): what a verification compares. */
  prepare(message: ImportedMessage): ImportMessageRow {
    return this.row(message, 0);
  }

  private row(m: ImportedMessage, i: number): ImportMessageRow {
    const r = messageRow(this.redact ? { ...m, ...this.redact(m), clientId: m.clientId } : m, i);
    this.sql.refuse?.(r.message);
    return r;
  }
}

function sessionRow(s: ImportedSession): ImportSessionRow {
  if (s === null || typeof s !== "object") throw new TypeError("session must be an object");
  requireString(s.id, "session.id");
  if (s.id.length > 200) throw new TypeError("session.id must be at most 200 characters");
  requireString(s.source, "session.source");
  for (const key of ["createdAt", "endedAt"] as const) {
    const v = s[key];
    if (v === null && key === "endedAt") continue;
    if (!Number.isSafeInteger(v) || (v as number) < 0)
      throw new RangeError(`session.${key} must be epoch milliseconds, got ${v}`);
  }
  const title = normalizeTitle(s.title);
  return {
    ...s,
    title,
    titleSource: title === null ? null : (s.titleSource ?? "user"),
    metadata: serializeMetadata(s.metadata, "session.metadata"),
  };
}

function messageRow(m: ImportedMessage, i: number): ImportMessageRow {
  if (typeof m?.clientId !== "string" || m.clientId === "")
    throw new TypeError(`messages[${i}].clientId must be a non-empty string`);
  if (!Number.isSafeInteger(m.createdAt) || m.createdAt < 0)
    throw new RangeError(`messages[${i}].createdAt must be epoch milliseconds, got ${m.createdAt}`);
  if (m.active === false && m.archivedReason !== "rewind" && m.archivedReason !== "compaction")
    throw new TypeError(
      `messages[${i}].archivedReason must be "rewind" or "compaction" when inactive`,
    );
  return {
    message: prepare(m, m.createdAt),
    active: m.active !== false,
    archivedReason: m.active === false ? m.archivedReason : null,
  };
}

/**
 * The store as every part of hearth sees it, whatever the backend: one
 * profile's sessions, messages and the rest, on SQLite (SqliteStore, the
 * embedded default) or PostgreSQL (PgStore, selected by store.url).
 *
 * What only makes sense on a database file (its path on disk, the kernel
 * locks, the structural gate, online copies, maintenance windows, reattaching
 * to replaced files) lives on SqliteStore alone: a caller narrows first with
 * isSqliteStore(store), or sqliteOnly(store, what) to refuse on PostgreSQL.
 */
import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import type { Audit } from "./audit.js";
import type { Browse } from "./browse.js";
import type { BrowserLogins } from "./browser-logins.js";
import type { ExportOptions } from "./export.js";
import type { GraphCheckpoints } from "./graph-checkpoints.js";
import type { Handoffs } from "./handoffs.js";
import type { Hosts } from "./hosts.js";
import type { Imports } from "./imports.js";
import type { JsonTail } from "./json-tail.js";
import type { Messages } from "./messages.js";
import type { Meta } from "./meta.js";
import type { Runs } from "./runs.js";
import type { Sessions } from "./sessions.js";
import type { SqliteStore } from "./sqlite/store.js";
import type { Stats } from "./stats.js";
import type { Tokens } from "./tokens.js";
import type { ToolPermissions } from "./tool-permissions.js";
import type {
  ConnectionRole,
  DurabilityReport,
  PgDurabilityReport,
  SearchHit,
  SearchOptions,
  StoreCounts,
} from "./types.js";

export type StoreBackend = "sqlite" | "postgres";

/** Where a store's data lives and how it was opened: the same members on every backend. */
export interface StoreLocation {
  readonly home: string;
  readonly profile: string;
  /**
   * Where the data lives, for messages and keys: the database file's
   * absolute path (SQLite) or the store URL with its password masked
   * (PostgreSQL). It is the `resource` of the store's coded errors. Never a
   * file to open on PostgreSQL: narrow on `backend` before touching disk.
   */
  readonly path: string;
  readonly role: ConnectionRole;
  readonly config: HearthConfig;
  /** Configuration that could not be applied (also logged once, loudly). */
  readonly warnings: readonly string[];
}

/** The API objects of a store, one per concept; every backend builds them with storeParts(). */
export interface StoreParts {
  readonly sessions: Sessions;
  readonly messages: Messages;
  readonly meta: Meta;
  /** Handoff state machine (D5). */
  readonly handoffs: Handoffs;
  /** Pairing codes and rotating tokens for remote clients (D6). */
  readonly tokens: Tokens;
  /** Dashboard browser logins, hashed, shared by every dashboard of the store. */
  readonly browserLogins: BrowserLogins;
  /** The gateways and dashboards of every host sharing the store (PostgreSQL; none on SQLite). */
  readonly hosts: Hosts;
  /** Filtered session pages, transcript pages and change probes for browsing UIs (the dashboard). */
  readonly browse: Browse;
  /** Scheduled job runs and their outcomes (M4). */
  readonly runs: Runs;
  /** Health samples over time for the dashboard's chart. */
  readonly stats: Stats;
  /** LangGraph checkpoints and pending writes (used by hearth/langgraph). */
  readonly graphCheckpoints: GraphCheckpoints;
  /** The JSON contents of a session's last messages in one read (used by hearth/openai-agents). */
  readonly jsonTail: JsonTail;
  /** The audit trail of destructive and exporting acts (docs/security.md#audit-trail). */
  readonly audit: Audit;
  /** Permission asked before a tool acts, and "always" grants per session (docs/gateway.md#permission). */
  readonly toolPermissions: ToolPermissions;
  /** History lived elsewhere, written with its own times and archived states (hearth import). */
  readonly imports: Imports;
}

/** One profile's state store. Obtain it with openStore(); close it when done. */
export interface Store extends StoreLocation, StoreParts {
  /** Which database holds the data: a SQLite file, or a PostgreSQL server. */
  readonly backend: StoreBackend;
  /** Full-text search over message content. Any text is searched literally; it never throws on syntax. */
  search(text: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** Stream sessions as JSONL or Markdown chunks. */
  export(options: ExportOptions): AsyncGenerator<string>;
  counts(): Promise<StoreCounts>;
  /**
   * Durability settings as the database reports them: SQLite's configured
   * versus actual pragmas, or PostgreSQL's server settings (`backend: "postgres"`).
   */
  durability(): Promise<DurabilityReport | PgDurabilityReport>;
  /** Schema version (and SQLite's application_id; 0 on PostgreSQL) as stored in the database. */
  schema(): Promise<{ version: number; applicationId: number }>;
  /** The cheap consistency check the backend offers (docs/api.md says what each checks). */
  quickCheck(): Promise<{ ok: boolean; problems: string[] }>;
  /** Calls made before close() finish first; later ones get HEARTH_STORE_CLOSED. Idempotent. */
  close(): Promise<void>;
  /** True from the moment close() is called. */
  readonly isClosed: boolean;
  [Symbol.asyncDispose](): Promise<void>;
}

/** True when `store` is a SQLite store, with its file-level members (path on disk, locks, gate). */
export function isSqliteStore(store: Store): store is SqliteStore {
  return store.backend === "sqlite";
}

/**
 * The SQLite store behind `store`, or HEARTH_UNSUPPORTED_BACKEND naming
 * `what` (a file-level operation: the structural gate, an online copy, a
 * maintenance window) when the store is on PostgreSQL. Changes nothing.
 */
export function sqliteOnly(store: Store, what: string): SqliteStore {
  if (isSqliteStore(store)) return store;
  throw new HearthError(
    "HEARTH_UNSUPPORTED_BACKEND",
    `${what} works on a SQLite store; the store of profile ${store.profile} is on PostgreSQL (${store.path})`,
    {
      resource: store.path,
      hint: "use the PostgreSQL tools for it (hearth doctor says which), or run it on a SQLite profile",
    },
  );
}

/** HEARTH_STORE_CLOSED for a call on a closed store of `resource`. */
export function storeClosed(resource: string): HearthError {
  return new HearthError("HEARTH_STORE_CLOSED", `the store of ${resource} is closed`, {
    resource,
    hint: "open a new one with openStore()",
  });
}

/** HEARTH_ABORTED: the caller's signal ended the call before it wrote anything. */
export function abortedError(signal: AbortSignal): HearthError {
  return new HearthError("HEARTH_ABORTED", "the call was aborted before it wrote anything", {
    hint: "nothing was written; call again when you still want it",
    cause: signal.reason,
  });
}

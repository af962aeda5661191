/**
 * One profile's state store on PostgreSQL: the Store interface (../api.ts)
 * on a PgDb. Obtain it with openStore({ url }) (or store.url in config, or
 * HEARTH_STORE_URL); close it when done. Several processes on several
 * hosts may hold stores on one database: every cross-process guarantee
 * rests on the server's row locks, advisory locks and transactions.
 */
import type { HearthConfig } from "../../config/schema.js";
import type { Store, StoreLocation, StoreParts } from "../api.js";
import { codedErrors, codedGenerator, codeError } from "../coded-errors.js";
import { type ExportOptions, exportSessions, exportStep } from "../export.js";
import { redactorFor } from "../redaction.js";
import { searchMessages } from "../search.js";
import { storeParts } from "../store-parts.js";
import type { ConnectionRole, SearchHit, SearchOptions, StoreCounts } from "../types.js";
import { PgAudit } from "./audit.js";
import { PgBrowse } from "./browse.js";
import { PgBrowserLogins } from "./browser-logins.js";
import { type StoreDb, storeDb } from "./db.js";
import { PgExport } from "./export.js";
import { PgGraphCheckpoints } from "./graph-checkpoints.js";
import { PgHandoffs } from "./handoffs.js";
import { PgHosts } from "./hosts.js";
import { PgImports } from "./imports.js";
import { pgQuickCheck, readPgDurability, readPgSchema } from "./inspect.js";
import { PgJsonTail } from "./json-tail.js";
import { PgMessages } from "./messages.js";
import { PgMeta } from "./meta.js";
import { OwnerPresence } from "./owner-presence.js";
import { maskUrl, type PgDb } from "./pool.js";
import { PgRuns } from "./runs.js";
import { PgSearch } from "./search.js";
import { PgSessions } from "./sessions.js";
import { PgStats } from "./stats.js";
import { PgTokens } from "./tokens.js";
import { PgToolPermissions } from "./tool-permissions.js";

export interface PgStoreInit {
  home: string;
  profile: string;
  role: ConnectionRole;
  config: HearthConfig;
  warnings: string[];
  db: PgDb;
  /** False for a pool the caller gave openStore(): close() leaves it open. */
  ownsPool?: boolean;
}

// The members of StoreLocation and StoreParts are declared once, in api.ts,
// for every backend; the constructor assigns every one of them.
export interface PgStore extends StoreLocation, StoreParts {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: its interface above is assigned in the constructor
export class PgStore implements Store {
  readonly backend = "postgres" as const;
  /** The pool's PgDb wrapped for this store: close() drains it, a reader never writes. */
  private readonly db: StoreDb;
  private closing: Promise<void> | undefined;
  /** Holds the presence of the owners this store claimed handoffs as; closed with the store. */
  private readonly pgHandoffs: PgHandoffs;
  /** Holds the presence of the owners this store's turn leases name; closed with the store. */
  private readonly leaseOwners: OwnerPresence;
  private readonly ownsPool: boolean;

  constructor(init: PgStoreInit) {
    this.ownsPool = init.ownsPool !== false;
    const location: StoreLocation = {
      home: init.home,
      profile: init.profile,
      // The store URL with its password masked (the resource of every coded error).
      path: maskUrl(init.db.url),
      role: init.role,
      config: init.config,
      warnings: init.warnings,
    };
    Object.assign(this, location);
    const db = storeDb(init.db, init.role);
    this.db = db;
    this.pgHandoffs = new PgHandoffs(db);
    this.leaseOwners = new OwnerPresence(db.url, db.pool.options);
    const parts = storeParts(
      {
        sessions: new PgSessions(db),
        messages: new PgMessages(db, this.leaseOwners),
        meta: new PgMeta(db, this.leaseOwners),
        handoffs: this.pgHandoffs,
        tokens: new PgTokens(db),
        browserLogins: new PgBrowserLogins(db),
        hosts: new PgHosts(db, this.leaseOwners),
        browse: new PgBrowse(db),
        runs: new PgRuns(db),
        stats: new PgStats(db),
        graphCheckpoints: new PgGraphCheckpoints(db),
        jsonTail: new PgJsonTail(db),
        audit: new PgAudit(db),
        toolPermissions: new PgToolPermissions(db),
        imports: new PgImports(db),
      },
      // The store's one error policy (coded-errors.ts): here it tags API misuse.
      (_, part) => codedErrors(part, this.path),
      redactorFor(this.config, this.profile),
    );
    Object.assign(this, parts);
  }

  /** Full-text search (tsvector, GIN); any text is searched literally and never throws on syntax. */
  search(text: string, options?: SearchOptions): Promise<SearchHit[]> {
    return searchMessages(new PgSearch(this.db), text, options).catch((err: unknown) => {
      throw codeError(err, this.path);
    });
  }

  /** Stream sessions as JSONL or Markdown chunks, a page of messages per step. */
  export(options: ExportOptions): AsyncGenerator<string> {
    const rows = new PgExport(this.db);
    return codedGenerator(
      () => exportSessions(options, (o, cursor) => exportStep(rows, o, cursor)),
      this.path,
    );
  }

  counts(): Promise<StoreCounts> {
    return this.messages.counts();
  }

  /** The server's durability settings (SHOW via pg_settings), never the configuration echoed. */
  durability() {
    return readPgDurability(this.db);
  }

  /** The version in hearth_schema; applicationId is SQLite's and 0 here. */
  schema(): Promise<{ version: number; applicationId: number }> {
    return readPgSchema(this.db);
  }

  /** Schema version, tables present, no invalid index, no checksum failures counted (no scans). */
  quickCheck(): Promise<{ ok: boolean; problems: string[] }> {
    return pgQuickCheck(this.db);
  }

  /** Calls made before close() finish first; later ones get HEARTH_STORE_CLOSED. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.db.stop().then(async () => {
      // Handoffs and turn leases hold connections of their own (the owners'
      // presence): they let go first.
      await Promise.all([this.pgHandoffs.close(), this.leaseOwners.close()]);
      // A caller's pool stays theirs to end.
      if (this.ownsPool) await this.db.pool.end();
    });
    return this.closing;
  }

  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

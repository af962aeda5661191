/**
 * The backends the conformance suite runs on, one factory each: SQLite
 * through openStore({ home }), PostgreSQL on a fresh database with the PG
 * modules built directly on a pool (until openStore({ url }) returns a
 * PgStore: then the PostgreSQL factory becomes openStore({ url }) too and
 * `seed` becomes store.sessions / store.messages on both).
 *
 * `seed` writes the sessions and messages the module tests need; on
 * PostgreSQL it writes the rows the way the store does (next_ordinal,
 * counters, last activity) with plain SQL.
 */
import { openStore } from "../../src/index.js";
import { Browse } from "../../src/store/browse.js";
import { BrowserLogins } from "../../src/store/browser-logins.js";
import { GraphCheckpoints } from "../../src/store/graph-checkpoints.js";
import { Handoffs } from "../../src/store/handoffs.js";
import { JsonTail } from "../../src/store/json-tail.js";
import { PgBrowse } from "../../src/store/pg/browse.js";
import { PgBrowserLogins } from "../../src/store/pg/browser-logins.js";
import { PgGraphCheckpoints } from "../../src/store/pg/graph-checkpoints.js";
import { PgHandoffs } from "../../src/store/pg/handoffs.js";
import { PgJsonTail } from "../../src/store/pg/json-tail.js";
import { migratePg } from "../../src/store/pg/migrate.js";
import { createPool, type PgDb, type PgPool, pgDb } from "../../src/store/pg/pool.js";
import { PgRuns } from "../../src/store/pg/runs.js";
import { PgStats } from "../../src/store/pg/stats.js";
import { PgTokens } from "../../src/store/pg/tokens.js";
import { Runs } from "../../src/store/runs.js";
import { Stats } from "../../src/store/stats.js";
import { Tokens } from "../../src/store/tokens.js";
import { afterThisTest } from "../helpers/cleanups.js";
import { tempHome } from "../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../helpers/pg.js";

export interface SeedSession {
  id?: string;
  source?: string;
  chatKey?: string;
  title?: string;
  parentId?: string;
}

/** Tokens an assistant message reports, and the model (its metadata.model). */
export interface SeedUsage {
  tokensIn: number;
  tokensOut: number;
  model: string;
}

/** Sessions and messages for the module tests, written the way each backend's store writes them. */
export interface Seed {
  session(input?: SeedSession): Promise<string>;
  /** Appends at the next ordinal: a string is a text message, anything else JSON. */
  append(
    sessionId: string,
    role: string,
    content: unknown,
    name?: string,
    usage?: SeedUsage,
  ): Promise<{ id: number; ordinal: number }>;
  set(
    sessionId: string,
    flags: { pinned?: boolean; archived?: boolean; hidden?: boolean; ended?: boolean },
  ): Promise<void>;
  /** Archive the last live message (a rewind of one): it becomes history. */
  pop(sessionId: string): Promise<void>;
}

export interface Modules {
  readonly backend: "sqlite" | "postgres";
  readonly handoffs: Handoffs;
  readonly tokens: Tokens;
  readonly browserLogins: BrowserLogins;
  readonly runs: Runs;
  readonly stats: Stats;
  readonly browse: Browse;
  readonly jsonTail: JsonTail;
  readonly graphCheckpoints: GraphCheckpoints;
  readonly seed: Seed;
  /** Where a second process opens the same store: { home } or { url }. */
  readonly location: { home: string } | { url: string };
  /** The same modules opened a second time on the same store (another connection, as another process would). */
  reopen(): Promise<Modules>;
  /** Close these modules' store (what a process exiting does); idempotent. */
  close(): Promise<void>;
}

export interface Backend {
  readonly name: "sqlite" | "postgres";
  open(): Promise<Modules>;
}

async function sqliteModules(home: string): Promise<Modules> {
  const store = await openStore({ home });
  const close = () => store.close();
  afterThisTest(close);
  return {
    backend: "sqlite",
    handoffs: store.handoffs,
    tokens: store.tokens,
    browserLogins: store.browserLogins,
    runs: store.runs,
    stats: store.stats,
    browse: store.browse,
    jsonTail: store.jsonTail,
    graphCheckpoints: store.graphCheckpoints,
    location: { home },
    reopen: () => sqliteModules(home),
    close,
    seed: {
      async session(input = {}) {
        return (await store.sessions.create(input)).id;
      },
      async append(sessionId, role, content, name, usage) {
        const m = await store.messages.append(sessionId, {
          role: role as "user",
          content: content as string,
          ...(name ? { name } : {}),
          ...(usage
            ? {
                tokensIn: usage.tokensIn,
                tokensOut: usage.tokensOut,
                metadata: { model: usage.model },
              }
            : {}),
        });
        return { id: m.id, ordinal: m.ordinal };
      },
      async set(id, flags) {
        if (flags.pinned !== undefined) await store.sessions.setPinned(id, flags.pinned);
        if (flags.archived !== undefined) await store.sessions.setArchived(id, flags.archived);
        if (flags.hidden !== undefined) await store.sessions.setHidden(id, flags.hidden);
        if (flags.ended) await store.sessions.end(id, "test");
      },
      async pop(sessionId) {
        await store.messages.pop(sessionId);
      },
    },
  };
}

export function pgModulesOn(db: PgDb): Omit<
  Modules,
  "backend" | "seed" | "location" | "reopen" | "close"
> & {
  /** The handoffs' backend: it holds owner presence until closed. */
  pgHandoffs: PgHandoffs;
} {
  const pgHandoffs = new PgHandoffs(db);
  return {
    pgHandoffs,
    handoffs: new Handoffs(pgHandoffs),
    tokens: new Tokens(new PgTokens(db)),
    browserLogins: new BrowserLogins(new PgBrowserLogins(db)),
    runs: new Runs(new PgRuns(db)),
    stats: new Stats(new PgStats(db)),
    browse: new Browse(new PgBrowse(db)),
    jsonTail: new JsonTail(new PgJsonTail(db)),
    graphCheckpoints: new GraphCheckpoints(new PgGraphCheckpoints(db)),
  };
}

async function pgModules(url: string): Promise<Modules> {
  const pool: PgPool = createPool(url, { max: 4 });
  const db = pgDb(pool, url, "default");
  const modules = pgModulesOn(db);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= modules.pgHandoffs.close().then(() => pool.end());
    return closing;
  };
  afterThisTest(close);
  await migratePg(pool, url);
  return {
    backend: "postgres",
    ...modules,
    location: { url },
    reopen: () => pgModules(url),
    close,
    seed: pgSeed(db),
  };
}

function pgSeed(db: PgDb): Seed {
  return {
    async session(input = {}) {
      const id = input.id ?? crypto.randomUUID();
      const now = Date.now();
      await db.query(
        "seed a session",
        `INSERT INTO sessions (id, profile, source, title, title_source, created_at, updated_at,
           last_activity_at, parent_id, chat_key)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $7, $8)`,
        [
          id,
          db.profile,
          input.source ?? "cli",
          input.title ?? null,
          input.title ? "user" : null,
          now,
          input.parentId ?? null,
          input.chatKey ?? null,
        ],
      );
      return id;
    },
    async append(sessionId, role, content, name, usage) {
      return db.transaction("seed a message", async (client) => {
        const now = Date.now();
        const slot = await client.query(
          `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
             last_activity_at = greatest(last_activity_at, $2), updated_at = $2
           WHERE id = $1 RETURNING next_ordinal - 1 AS ordinal`,
          [sessionId, now],
        );
        const ordinal = Number(slot.rows[0].ordinal);
        const text = typeof content === "string";
        const { rows } = await client.query(
          `INSERT INTO messages (session_id, ordinal, role, content, content_type, created_at, name,
             tokens_in, tokens_out, metadata)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
          [
            sessionId,
            ordinal,
            role,
            text ? content : JSON.stringify(content),
            text ? "text" : "json",
            now,
            name ?? null,
            usage?.tokensIn ?? null,
            usage?.tokensOut ?? null,
            usage ? JSON.stringify({ model: usage.model }) : null,
          ],
        );
        return { id: Number(rows[0].id), ordinal };
      });
    },
    async set(id, flags) {
      const now = Date.now();
      if (flags.pinned !== undefined)
        await db.query("seed", "UPDATE sessions SET pinned = $2, updated_at = $3 WHERE id = $1", [
          id,
          flags.pinned ? 1 : 0,
          now,
        ]);
      if (flags.archived !== undefined)
        await db.query("seed", "UPDATE sessions SET archived = $2, updated_at = $3 WHERE id = $1", [
          id,
          flags.archived ? 1 : 0,
          now,
        ]);
      if (flags.hidden !== undefined)
        await db.query("seed", "UPDATE sessions SET hidden = $2, updated_at = $3 WHERE id = $1", [
          id,
          flags.hidden ? 1 : 0,
          now,
        ]);
      if (flags.ended)
        await db.query(
          "seed",
          "UPDATE sessions SET ended_at = $2, end_reason = 'test', updated_at = $2 WHERE id = $1",
          [id, now],
        );
    },
    async pop(sessionId) {
      await db.query(
        "seed",
        `UPDATE messages SET active = 0, archived_reason = 'rewind'
         WHERE id = (SELECT id FROM messages WHERE session_id = $1 AND active = 1 ORDER BY ordinal DESC LIMIT 1)`,
        [sessionId],
      );
      await db.query(
        "seed",
        "UPDATE sessions SET message_count = message_count - 1 WHERE id = $1",
        [sessionId],
      );
    },
  };
}

export const sqlite: Backend = { name: "sqlite", open: () => sqliteModules(tempHome()) };
export const postgres: Backend = {
  name: "postgres",
  open: async () => pgModules(await freshPgDatabase()),
};

/** Every backend the conformance suite runs on (PostgreSQL unless HEARTH_TEST_PG=skip). */
export const backends: Backend[] = pgEnabled ? [sqlite, postgres] : [sqlite];

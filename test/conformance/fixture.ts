/**
 * The conformance suite's set-up: the store API's behaviours are written
 * once and run against every backend in `backends` (SQLite in a temp home;
 * PostgreSQL in a fresh database per home, on the server of
 * HEARTH_TEST_PG_URL). Nothing is mocked: real files, a real server.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import {
  type HearthErrorCode,
  type OpenStoreOptions,
  openStore,
  type Store,
  sqliteOnly,
} from "../../src/index.js";
import { internals } from "../../src/store/sqlite/store.js";
import { afterThisFile } from "../helpers/cleanups.js";
import { freshPgDatabase, pgEnabled } from "../helpers/pg.js";

export interface Backend {
  name: "sqlite" | "postgres";
  /** The code of the database's own refusals (HEARTH_SQLITE, HEARTH_POSTGRES). */
  dbErrorCode: HearthErrorCode;
  /** The openStore() options that put a home's store on this backend. */
  place(home: string): Promise<Pick<OpenStoreOptions, "url">>;
  /**
   * Real fault injection inside the database: from now on an INSERT of a
   * message with `content` is refused by the database itself ("<content>
   * refused"). Returns the undo.
   */
  refuseContent(store: Store, content: string): Promise<() => Promise<void>>;
  /** Real fault injection: from now on every INSERT into `table` is refused by the database ("<table> refused"). Returns the undo. */
  refuseInserts(store: Store, table: string): Promise<() => Promise<void>>;
}

const pgUrls = new Map<string, Promise<string>>();
const spare: string[] = [];

/** Empty a test database (schema, tables, triggers) and keep it for the next home. */
async function recycle(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
  } finally {
    await admin.end();
  }
  spare.push(url);
}

export const sqlite: Backend = {
  name: "sqlite",
  dbErrorCode: "HEARTH_SQLITE",
  place: async () => ({}),
  refuseContent(store, content) {
    return sqliteRefusal(store, "messages", `NEW.content = '${content}'`, `${content} refused`);
  },
  refuseInserts(store, table) {
    return sqliteRefusal(store, table, "1", `${table} refused`);
  },
};

/** A TEMP trigger refusing the inserts into `table` that match `when`: it lives only on the writer connection, never in the file. */
async function sqliteRefusal(store: Store, table: string, when: string, message: string) {
  const writer = sqliteOnly(store, "fault injection")[internals].connection("writer");
  writer.db.exec(`CREATE TEMP TRIGGER refuse_${table} BEFORE INSERT ON main.${table}
    WHEN ${when} BEGIN SELECT RAISE(ABORT, '${message}'); END`);
  return async () => {
    writer.db.exec(`DROP TRIGGER temp.refuse_${table}`);
  };
}

/** A trigger refusing the inserts into `table` that match `when`, on the home's database. */
async function pgRefusal(store: Store, table: string, when: string, message: string) {
  const url = [...pgUrls.entries()].find(([home]) => home === store.home)?.[1];
  if (!url) throw new Error(`no database for ${store.home}`);
  const run = async (sql: string) => {
    const admin = new pg.Client({ connectionString: await url });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  await run(`CREATE FUNCTION refuse_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${when} THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_${table}();`);
  return () => run(`DROP TRIGGER refuse_${table} ON ${table}; DROP FUNCTION refuse_${table}();`);
}
export const postgres: Backend = {
  name: "postgres",
  dbErrorCode: "HEARTH_POSTGRES",
  refuseContent(store, content) {
    return pgRefusal(store, "messages", `NEW.content = '${content}'`, `${content} refused`);
  },
  refuseInserts(store, table) {
    return pgRefusal(store, table, "true", `${table} refused`);
  },
  place: async (home) => {
    let url = pgUrls.get(home);
    if (!url) {
      // Databases are recycled within a file (emptied between tests): creating
      // and dropping one per test costs seconds on a busy server.
      // The spares go with the file: its databases are dropped after it (pg.ts).
      if (pgUrls.size === 0 && spare.length === 0)
        afterThisFile(() => {
          pgUrls.clear();
          spare.length = 0;
        });
      const recycled = spare.pop();
      url = recycled ? Promise.resolve(recycled) : freshPgDatabase();
      pgUrls.set(home, url);
    }
    return { url: await url };
  },
};

/** Every backend the suite runs on (PostgreSQL unless HEARTH_TEST_PG=skip). */
export const backends: Backend[] = pgEnabled ? [sqlite, postgres] : [sqlite];

/** Tracks the homes and stores a test opened, so afterEach can close and remove them all. */
export class TestHomes {
  private readonly dirs: string[] = [];
  private readonly stores: Store[] = [];

  constructor(readonly backend: Backend) {}

  /** A fresh, empty home directory (0700, from mkdtemp); on PostgreSQL also a fresh database. */
  makeHome(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-test-"));
    this.dirs.push(dir);
    return dir;
  }

  /** openStore() on `home` and this backend, with an empty environment. */
  async open(home: string, options: Omit<OpenStoreOptions, "home"> = {}): Promise<Store> {
    const store = await openStore({
      env: {},
      ...options,
      ...(await this.backend.place(home)),
      home,
    });
    this.stores.push(store);
    return store;
  }

  /** Close every store (newest first) and remove every home. */
  async cleanup(): Promise<void> {
    for (const store of this.stores.splice(0).reverse()) await store.close();
    for (const dir of this.dirs.splice(0)) {
      fs.rmSync(dir, { recursive: true, force: true });
      const url = pgUrls.get(dir);
      pgUrls.delete(dir);
      if (url) await recycle(await url);
    }
  }
}

export { drain, expectHearthError, tick } from "../integration/store-api/fixture.js";

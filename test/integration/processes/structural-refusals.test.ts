import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, openStore } from "../../../src/index.js";
import { InodeLocks } from "../../../src/process/inode-locks.js";
import { Connection } from "../../../src/store/sqlite/connection.js";
import { migrate } from "../../../src/store/sqlite/migrate.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../../src/store/sqlite/migrations.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

const CURRENT = LATEST_SCHEMA_VERSION;
const NEXT = [
  ...MIGRATIONS,
  { version: CURRENT + 1, description: "test", sql: "CREATE TABLE extra (x INTEGER) STRICT;" },
];

/** This process as a writer of `path`, the way openStore makes it one. */
async function writerOf(path: string): Promise<InodeLocks> {
  const st = statSync(path);
  const locks = new InodeLocks(path, `${st.dev}:${st.ino}`);
  await locks.enterWriter(0);
  return locks;
}

describe("schema migration is structural", () => {
  it("refuses while another process holds the store, naming it, and changes nothing", async () => {
    const home = tempHome();
    const setup = await openStore({ home });
    const session = await setup.sessions.create({ title: "keep me" });
    const path = setup.path;
    await setup.close();

    const holder = await startWorker();
    await holder.call("open", { home });
    const conn = new Connection(path, "writer", DEFAULT_CONFIG);
    const locks = await writerOf(path);
    try {
      const ctx = {
        backupsDir: join(home, "backups"),
        profile: "default",
        locks,
        migrations: NEXT,
      };
      let error: unknown;
      try {
        migrate(conn, ctx);
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ code: "HEARTH_STORE_HELD" });
      expect((error as Error).message).toContain(`pid ${holder.pid}`);
      expect((error as Error).message).toContain("store-worker.mjs");
      expect(conn.db.pragma("user_version", { simple: true })).toBe(CURRENT);
      expect(existsSync(join(home, "backups"))).toBe(false);

      await holder.call("close");
      const result = migrate(conn, ctx);
      expect(result).toMatchObject({ from: CURRENT, to: CURRENT + 1 });
      expect(conn.db.pragma("user_version", { simple: true })).toBe(CURRENT + 1);
      // The backup was taken first, and holds the old schema and the data.
      expect(readdirSync(join(home, "backups"))).toHaveLength(1);
      const backup = new Database(result.backup!, { readonly: true });
      expect(backup.pragma("user_version", { simple: true })).toBe(CURRENT);
      expect(backup.prepare("SELECT title FROM sessions WHERE id = ?").get(session.id)).toEqual({
        title: "keep me",
      });
      backup.close();
    } finally {
      conn.close();
      locks.close();
    }
  });
});

describe("journal mode is a property of the file (C2)", () => {
  it("is not changed while another process holds the database, and says so once", async () => {
    const home = tempHome();
    const holder = await startWorker();
    await holder.call("open", { home });
    const warnings: string[] = [];
    const logger = {
      warn: (_: Record<string, unknown>, message: string) => warnings.push(message),
    };
    const store = await openSqliteStore({
      home,
      config: { durability: { journalMode: "delete" } },
      logger,
    });
    expect((await store.durability()).journalMode).toEqual({ configured: "delete", actual: "wal" });
    expect(store.warnings).toHaveLength(1);
    expect(store.warnings[0]).toContain(`${holder.pid}`);
    expect(warnings).toEqual(store.warnings);
    await store.close();
    // The holder keeps working on the unchanged file.
    const session = await holder.call<{ id: string }>("create", { title: "still wal" });
    await holder.call("append", { sessionId: session.id, content: "ok", clientId: "x" });
  });

  it("is changed when nobody else holds the database", async () => {
    const home = tempHome();
    const first = await openStore({ home });
    await first.close();
    const store = await openSqliteStore({
      home,
      config: { durability: { journalMode: "delete" } },
    });
    expect((await store.durability()).journalMode).toEqual({
      configured: "delete",
      actual: "delete",
    });
    expect(store.warnings).toEqual([]);
    await store.close();
  });
});

import { rmSync, statSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, openStore } from "../../src/index.js";
import { InodeLocks } from "../../src/process/inode-locks.js";
import { migratePg } from "../../src/store/pg/migrate.js";
import { createPool, pgDb } from "../../src/store/pg/pool.js";
import { PG_MIGRATIONS } from "../../src/store/pg/schema.js";
import { PgTokens } from "../../src/store/pg/tokens.js";
import { Connection } from "../../src/store/sqlite/connection.js";
import { migrate } from "../../src/store/sqlite/migrate.js";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { Tokens } from "../../src/store/tokens.js";
import { tempHome } from "../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../helpers/pg.js";

const BEFORE = "INSERT INTO auth_families (id, label, created_at) VALUES ('old', 'phone', 1)";

/** Families paired before scopes existed keep working: the migration makes them admin, on both backends. */
describe("token scopes: the schema migration", () => {
  it("SQLite: a family of schema 9 is admin, of its own profile, after the upgrade", async () => {
    const home = tempHome();
    const first = await openStore({ home });
    const path = first.path;
    await first.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
    writeFileSync(path, "", { mode: 0o600 });
    const conn = new Connection(path, "writer", DEFAULT_CONFIG);
    const st = statSync(path);
    const locks = new InodeLocks(path, `${st.dev}:${st.ino}`);
    const previous = MIGRATIONS.filter((m) => m.version < 10);
    migrate(conn, {
      backupsDir: `${home}/backups`,
      profile: "default",
      locks,
      migrations: previous,
    });
    conn.db.exec(BEFORE);
    conn.close();
    const store = await openStore({ home });
    try {
      expect(await store.tokens.families()).toEqual([
        expect.objectContaining({ id: "old", scope: "admin", allProfiles: false }),
      ]);
    } finally {
      await store.close();
    }
  });

  it.runIf(pgEnabled)("PostgreSQL: a family of schema 2 is admin after the upgrade", async () => {
    const url = await freshPgDatabase();
    const pool = createPool(url, { max: 2 });
    try {
      await migratePg(pool, url, { migrations: PG_MIGRATIONS.filter((m) => m.version < 3) });
      await pool.query(BEFORE);
      await migratePg(pool, url);
      const tokens = new Tokens(new PgTokens(pgDb(pool, url, "default")));
      expect(await tokens.families()).toEqual([
        expect.objectContaining({ id: "old", scope: "admin", allProfiles: false }),
      ]);
    } finally {
      await pool.end();
    }
  });
});

import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError } from "../../../src/errors.js";
import { migratePg } from "../../../src/store/pg/migrate.js";
import { createPool, maskUrl, type PgPool } from "../../../src/store/pg/pool.js";
import { PG_LATEST_SCHEMA_VERSION, PG_MIGRATIONS } from "../../../src/store/pg/schema.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const pools: PgPool[] = [];
function pool(url: string): PgPool {
  const p = createPool(url);
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

async function error(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

describe.skipIf(!pgEnabled)("PostgreSQL schema", () => {
  it("creates the schema once, even when several pools migrate a new database at once", async () => {
    const url = await freshPgDatabase();
    const results = await Promise.all([1, 2, 3, 4].map(() => migratePg(pool(url), url)));
    expect(results.filter((r) => r.from === 0)).toHaveLength(1);
    expect(results.every((r) => r.to === PG_LATEST_SCHEMA_VERSION)).toBe(true);
    const { rows } = await pool(url).query("SELECT version FROM hearth_schema ORDER BY version");
    expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  it("names itself in pg_stat_activity: kind, pid and host", async () => {
    const url = await freshPgDatabase();
    const p = pool(url);
    const { rows } = await p.query(
      "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    );
    expect(rows[0].application_name).toMatch(new RegExp(`^hearth:[a-z-]+:${process.pid}@`));
  });

  it("refuses a database written by a newer hearth and changes nothing", async () => {
    const url = await freshPgDatabase();
    await migratePg(pool(url), url);
    await pool(url).query("INSERT INTO hearth_schema VALUES (999, 'future', 0)");
    const err = await error(migratePg(pool(url), url));
    expect(isHearthError(err, "HEARTH_SCHEMA_TOO_NEW")).toBe(true);
  });

  it("refuses a database holding tables hearth did not create, and creates nothing in it", async () => {
    const url = await freshPgDatabase();
    await pool(url).query("CREATE TABLE invoices (id int)");
    const err = await error(migratePg(pool(url), url));
    expect(isHearthError(err, "HEARTH_FOREIGN_DATABASE")).toBe(true);
    expect(String((err as Error).message)).toContain("invoices");
    const { rows } = await pool(url).query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(rows.map((r) => r.table_name)).toEqual(["invoices"]);
  });

  it("refuses to wait forever for another migration, naming the connection that holds the lock", async () => {
    const url = await freshPgDatabase();
    const holder = new pg.Client({
      connectionString: url,
      application_name: "hearth:cli:4242@elsewhere",
    });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1, $2)", [0x68656172, 1]);
      const err = await error(migratePg(pool(url), url, { lockWaitMs: 200 }));
      expect(isHearthError(err, "HEARTH_STORE_HELD")).toBe(true);
      expect(String((err as Error).message)).toContain("hearth:cli:4242@elsewhere");
    } finally {
      await holder.end();
    }
  });

  it("codes a bad URL, a wrong password and a server that is not there; passwords never appear", async () => {
    const url = await freshPgDatabase();
    expect(() => createPool("mysql://x@y/z")).toThrow(
      expect.objectContaining({ code: "HEARTH_STORE_URL_INVALID" }),
    );
    expect(() => createPool("postgres://host-only")).toThrow(
      expect.objectContaining({ code: "HEARTH_STORE_URL_INVALID" }),
    );
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    const auth = await error(migratePg(pool(wrong.toString()), wrong.toString()));
    expect(isHearthError(auth, "HEARTH_PG_AUTH")).toBe(true);
    expect(String((auth as Error).message)).not.toContain("not-the-password");
    const down = new URL(url);
    down.port = "1";
    const unavailable = await error(migratePg(pool(down.toString()), down.toString()));
    expect(isHearthError(unavailable, "HEARTH_PG_UNAVAILABLE")).toBe(true);
    expect(String((unavailable as Error).message)).not.toContain(`:${down.password}@`);
    expect(maskUrl(down.toString())).toContain(":***@");
  });
});

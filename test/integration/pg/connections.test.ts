/**
 * How a PostgreSQL store connects (store.pg): the pool never opens more
 * than pool.max connections, statementTimeoutMs reaches the server, TLS
 * settings are applied (and a CA file that cannot be read refuses), a
 * caller's own pg.Pool is used and left open, and a server out of
 * connection slots is named as such by the store and by doctor.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled, withPgClient } from "../../helpers/pg.js";
import { cliEnv, pgHome } from "./helpers.js";

const stores: Store[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const p of pools.splice(0)) await p.end();
});

async function open(url: string, pgSettings: Record<string, unknown>): Promise<Store> {
  const store = await openStore({
    home: tempHome(),
    url,
    env: {},
    config: { store: { pg: pgSettings } },
  });
  stores.push(store);
  return store;
}

// A connection of the test's own (test/helpers/pg.ts).
const admin = withPgClient;

/** This process's hearth connections to the database of `url`. */
async function ours(url: string): Promise<number> {
  const { rows } = await admin(url, (c) =>
    c.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE $1`,
      [`hearth:%:${process.pid}@%`],
    ),
  );
  return rows[0].n;
}

describe.skipIf(!pgEnabled)("store.pg: how a PostgreSQL store connects", () => {
  it("opens at most store.pg.pool.max connections however many calls run at once", async () => {
    const url = await freshPgDatabase();
    const store = await open(url, { pool: { max: 3 } });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => store.sessions.create({ title: `s${i}` })),
    );
    expect(await ours(url)).toBe(3);
    expect((await store.counts()).sessions).toBe(40);
  });

  it("statementTimeoutMs: a statement stuck behind a lock is cancelled by the server", async () => {
    const url = await freshPgDatabase();
    const store = await open(url, { statementTimeoutMs: 200 });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE");
      // Bounded either way: the lock goes after 20 s at the latest.
      const release = setTimeout(() => void holder.query("ROLLBACK").catch(() => {}), 20_000);
      const err = await store.sessions.create({ title: "blocked" }).catch((e: unknown) => e);
      clearTimeout(release);
      expect(isHearthError(err)).toBe(true);
      expect((err as { details?: { sqlstate?: string } }).details?.sqlstate).toBe("57014");
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    }
  });

  it("ssl: require is applied; a CA file that cannot be read refuses before connecting", async () => {
    const url = await freshPgDatabase();
    const serverSsl = await admin(url, async (c) => (await c.query("SHOW ssl")).rows[0].ssl);
    const required = openStore({
      home: tempHome(),
      url,
      env: {},
      config: { store: { pg: { ssl: { mode: "require" } } } },
    });
    if (serverSsl === "on") stores.push(await required);
    else await expect(required).rejects.toThrow(/SSL/);
    const badCa = await openStore({
      home: tempHome(),
      url,
      env: {},
      config: {
        store: { pg: { ssl: { mode: "verify-full", ca: join(tempHome(), "no-ca.pem") } } },
      },
    }).catch((e: unknown) => e);
    expect(isHearthError(badCa, "HEARTH_CONFIG_INVALID")).toBe(true);
    const both = await openStore({
      home: tempHome(),
      url: `${url}?sslmode=disable`,
      env: {},
      config: { store: { pg: { ssl: { mode: "require" } } } },
    }).catch((e: unknown) => e);
    expect(isHearthError(both, "HEARTH_CONFIG_INVALID")).toBe(true);
  });

  it("openStore({ pool }) runs on the caller's pg.Pool and leaves it open on close()", async () => {
    const url = await freshPgDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    const store = await openStore({ home: tempHome(), pool, env: {} });
    expect(store.backend).toBe("postgres");
    const session = await store.sessions.create({ title: "on your pool" });
    await store.messages.append(session.id, { role: "user", content: "hello" });
    await store.close();
    const { rows } = await pool.query("SELECT title FROM sessions");
    expect(rows).toEqual([{ title: "on your pool" }]);

    // A pool made of discrete fields (no URL, so none to derive a login
    // from): the store's own extra connection (a handoff owner's presence)
    // goes where the pool's go.
    const u = new URL(url);
    const fields = new pg.Pool({
      host: u.hostname,
      port: Number(u.port || 5432),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: u.pathname.slice(1),
      max: 2,
    });
    pools.push(fields);
    const onFields = await openStore({ home: tempHome(), pool: fields, env: {} });
    stores.push(onFields);
    expect(onFields.path).not.toContain(`:${decodeURIComponent(u.password)}@`);
    await onFields.handoffs.request(session.id, "telegram");
    expect(await onFields.handoffs.claim(session.id, "owner-1")).toBe(true);

    // With store.pg.schema, the caller's connections must already search that schema.
    const wrong = await openStore({
      home: tempHome(),
      pool,
      env: {},
      config: { store: { pg: { schema: "mine" } } },
    }).catch((e: unknown) => e);
    expect(isHearthError(wrong, "HEARTH_CONFIG_INVALID")).toBe(true);
    const schemaPool = new pg.Pool({
      connectionString: url,
      max: 2,
      options: "-c search_path=mine",
    });
    pools.push(schemaPool);
    const mine = await openStore({
      home: tempHome(),
      pool: schemaPool,
      env: {},
      config: { store: { pg: { schema: "mine" } } },
    });
    stores.push(mine);
    expect((await mine.sessions.list()).items).toEqual([]);
  });

  it("a server out of connection slots is HEARTH_PG_TOO_MANY_CONNECTIONS, and doctor says so", async () => {
    const url = await freshPgDatabase();
    const role = `hearth_lim_${randomBytes(4).toString("hex")}`;
    await admin(url, (c) => c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw' CONNECTION LIMIT 0`));
    try {
      const limited = new URL(url);
      limited.username = role;
      limited.password = "pw";
      const err = await openStore({ home: tempHome(), url: limited.toString(), env: {} }).catch(
        (e: unknown) => e,
      );
      expect(isHearthError(err, "HEARTH_PG_TOO_MANY_CONNECTIONS")).toBe(true);
      const doctor = await runCli(["--json", "doctor"], {
        home: pgHome(limited.toString()),
        env: cliEnv,
      });
      expect(doctor.code).toBe(4);
      const finding = doctor.json().findings[0];
      expect(finding.code).toBe("pg.too-many-connections");
      expect(finding.message).toContain("HEARTH_PG_TOO_MANY_CONNECTIONS");
      expect(finding.fix).toContain("store.pg.pool.max");
    } finally {
      await admin(url, (c) => c.query(`DROP ROLE ${role}`));
    }
  });
});

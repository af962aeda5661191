/**
 * A database that is not hearth's alone: an extension (pg_stat_statements)
 * and other applications' tables in public. hearth judges only its own
 * schema (store.pg.schema, else the connection's current one) and ignores
 * what extensions own; `migrate --to --dry-run` and the real migration give
 * the same verdict; two profiles in two schemas of one database stay apart.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

const env = { HEARTH_FAILPOINTS: "" };

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

/** A database another application uses: an extension and a table of its own in public. */
async function sharedDatabase(): Promise<string> {
  const url = await freshPgDatabase();
  await sql(url, "CREATE EXTENSION pg_stat_statements");
  await sql(url, "CREATE TABLE public.invoices (id int PRIMARY KEY, total numeric)");
  await sql(url, "INSERT INTO public.invoices VALUES (1, 9.5)");
  return url;
}

/** A SQLite home with one session, whose config.json sets `store`. */
async function sqliteHome(store: Record<string, unknown> = {}): Promise<string> {
  const home = tempHome();
  writeConfig(home, { store });
  const s = await openStore({ home, env: {} });
  const session = await s.sessions.create({ title: "to copy" });
  await s.messages.append(session.id, { role: "user", content: "hello" });
  await s.close();
  return home;
}

async function open(url: string, schema?: string): Promise<Store> {
  const store = await openStore({
    home: tempHome(),
    url,
    env: {},
    ...(schema ? { config: { store: { pg: { schema } } } } : {}),
  });
  stores.push(store);
  return store;
}

describe.skipIf(!pgEnabled)("a PostgreSQL database shared with others", () => {
  it("an extension's views in hearth's schema are not foreign: the store opens", async () => {
    const url = await freshPgDatabase();
    await sql(url, "CREATE EXTENSION pg_stat_statements");
    const home = await sqliteHome();
    const dry = await runCli(["--json", "migrate", "--to", url, "--dry-run"], { home, env });
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    const real = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(real.stderr).toBe("");
    expect(real.code).toBe(0);
    const store = await open(url);
    expect((await store.sessions.list()).items.map((s) => s.title)).toEqual(["to copy"]);
  });

  it("other tables in public: refused without a schema (dry run and real run alike), served with store.pg.schema", async () => {
    const url = await sharedDatabase();
    const plain = await sqliteHome();
    const dry = await runCli(["--json", "migrate", "--to", url, "--dry-run"], {
      home: plain,
      env,
    });
    const real = await runCli(["--json", "migrate", "--to", url], { home: plain, env });
    expect([dry.code, real.code]).toEqual([1, 1]);
    expect(JSON.parse(dry.stderr).error.code).toBe("HEARTH_FOREIGN_DATABASE");
    expect(JSON.parse(real.stderr).error.code).toBe("HEARTH_FOREIGN_DATABASE");
    const refused = await openStore({ home: tempHome(), url, env: {} }).catch((e: unknown) => e);
    expect(isHearthError(refused, "HEARTH_FOREIGN_DATABASE")).toBe(true);

    const own = await sqliteHome({ pg: { schema: "hearth" } });
    const ownDry = await runCli(["--json", "migrate", "--to", url, "--dry-run"], {
      home: own,
      env,
    });
    expect(ownDry.stderr).toBe("");
    const ownReal = await runCli(["--json", "migrate", "--to", url], { home: own, env });
    expect(ownReal.stderr).toBe("");
    expect([ownDry.code, ownReal.code]).toEqual([0, 0]);

    const store = await open(url, "hearth");
    expect((await store.sessions.list()).items.map((s) => s.title)).toEqual(["to copy"]);
    const tables = await sql(
      url,
      "SELECT table_schema, count(*)::int AS n FROM information_schema.tables WHERE table_schema IN ('public', 'hearth') AND table_type = 'BASE TABLE' GROUP BY 1 ORDER BY 1",
    );
    expect(tables.rows).toEqual([
      { table_schema: "hearth", n: expect.any(Number) },
      { table_schema: "public", n: 1 },
    ]);
    expect((await sql(url, "SELECT total FROM public.invoices")).rows).toEqual([{ total: "9.5" }]);
  });

  it("two profiles in two schemas of one database stay apart", async () => {
    const url = await sharedDatabase();
    const alpha = await open(url, "alpha");
    const beta = await open(url, "beta");
    const a = await alpha.sessions.create({ title: "alpha's" });
    await alpha.messages.append(a.id, { role: "user", content: "only in alpha" });
    const b = await beta.sessions.create({ title: "beta's" });
    expect((await alpha.sessions.list()).items.map((s) => s.title)).toEqual(["alpha's"]);
    expect((await beta.sessions.list()).items.map((s) => s.title)).toEqual(["beta's"]);
    expect(await beta.sessions.get(a.id)).toBeNull();
    expect((await beta.search("alpha")).length).toBe(0);
    expect((await alpha.counts()).messages).toBe(1);
    expect((await beta.counts()).messages).toBe(0);
    expect(await alpha.sessions.get(b.id)).toBeNull();
    // A reader of each schema sees its own rows only.
    const reader = await openStore({
      home: tempHome(),
      url,
      env: {},
      role: "reader",
      config: { store: { pg: { schema: "beta" } } },
    });
    stores.push(reader);
    expect((await reader.sessions.list()).items.map((s) => s.title)).toEqual(["beta's"]);
  });
});

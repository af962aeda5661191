import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { TABLE_KEYS } from "../../../src/store/copy/tables.js";
import { PG_TABLES } from "../../../src/store/pg/schema.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, PG_ADMIN_URL, pgEnabled } from "../../helpers/pg.js";
import { fillStore } from "./fill-store.js";
import { pgHome } from "./helpers.js";

const clients: pg.Client[] = [];
async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()));
});

/** Every row of every copied table, in key order, integers as bigint, blobs as Buffers. */
function sqliteRows(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      PG_TABLES.map((t) => {
        const stmt = db.prepare(`SELECT * FROM ${t} ORDER BY ${TABLE_KEYS[t].join(", ")}`);
        stmt.safeIntegers(true);
        return [t, stmt.all()];
      }),
    );
  } finally {
    db.close();
  }
}

async function pgCounts(url: string): Promise<Record<string, number>> {
  const c = await connect(url);
  const out: Record<string, number> = {};
  for (const t of PG_TABLES) {
    const { rows } = await c.query(`SELECT count(*)::int AS n FROM ${t}`);
    out[t] = rows[0].n;
  }
  return out;
}

async function filledHome(extra?: (store: Awaited<ReturnType<typeof openStore>>) => Promise<void>) {
  const home = tempHome();
  const store = await openStore({ home, env: {} });
  await fillStore(store);
  await extra?.(store);
  await store.close();
  return home;
}

const env = { HEARTH_FAILPOINTS: "" };

describe.skipIf(!pgEnabled)("hearth migrate --to", () => {
  it("round trip SQLite -> PostgreSQL -> SQLite keeps every row of every table, ids and bytes", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    const there = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(there.stderr).toBe("");
    expect(there.code).toBe(0);
    const report = there.json();
    expect(report.direction).toBe("sqlite-to-postgres");
    expect(report.verified).toBe(true);
    expect(report.target).not.toContain("hearth_test@"); // the password is masked
    const byTable = Object.fromEntries(report.tables.map((t: { table: string }) => [t.table, t]));
    const source = sqliteRows(join(home, "state.db"));
    for (const t of PG_TABLES) expect(byTable[t].rows).toBe(source[t]!.length);
    expect(byTable.messages.rows).toBeGreaterThan(40);
    expect(await pgCounts(url)).toEqual(
      Object.fromEntries(PG_TABLES.map((t) => [t, source[t]!.length])),
    );

    // The identity moved past the copied ids: a new row gets the next id.
    const c = await connect(url);
    const max = Number((await c.query("SELECT max(id) AS m FROM messages")).rows[0].m);
    const added = await c.query(
      "INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES ('zzz-parent', 1000, 'user', 'new', 1) RETURNING id",
    );
    expect(Number(added.rows[0].id)).toBe(max + 1);
    await c.query("DELETE FROM messages WHERE id = $1", [added.rows[0].id]);

    // And back, into a new home: a store hearth opens, rows identical to the original's.
    const back = tempHome();
    const home2 = await runCli(["--json", "migrate", "--from", url, "--to", back], { home, env });
    expect(home2.stderr).toBe("");
    expect(home2.code).toBe(0);
    const backReport = home2.json();
    expect(backReport.direction).toBe("postgres-to-sqlite");
    expect(backReport.tables).toEqual(
      report.tables.map((t: { table: string; rows: number; sha256: string }) => ({
        ...t,
        copied: t.rows,
      })),
    );
    expect(sqliteRows(join(back, "state.db"))).toEqual(source);

    const reopened = await openStore({ home: back, env: {} });
    try {
      const hits = await reopened.search("naïve");
      expect(hits.map((h) => h.sessionId)).toEqual(["zzz-parent"]);
      expect((await reopened.sessions.require("aaa-child")).parentId).toBe("zzz-parent");
      expect(await reopened.meta.get("empty-value")).toBe("");
    } finally {
      await reopened.close();
    }

    // A .db path works too, and an existing non-empty file is refused, untouched.
    const file = join(dirname(back), "copy.db");
    writeFileSync(file, "not empty");
    const refused = await runCli(["--json", "migrate", "--from", url, "--to", file], { home, env });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.code).toBe("HEARTH_TARGET_NOT_EMPTY");
    expect(readFileSync(file, "utf8")).toBe("not empty");
    // With store.url set, the configured database is the source.
    const file2 = join(dirname(back), "copy2.db");
    const ok = await runCli(["migrate", "--to", file2], { home: pgHome(url), env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("verified");
    expect(sqliteRows(file2)).toEqual(source);
  });

  it("keys sort by bytes on both sides, whatever the database's collation (ICU en-US here)", async () => {
    const home = await filledHome(async (store) => {
      for (const id of ["B-upper", "a-lower", "_under", "Ä-umlaut", "a b", "ab"])
        await store.sessions.create({ id });
      for (const key of ["B", "a", "_z", "é", "E"]) await store.meta.set(key, key);
    });
    // Integers beyond 2^53 survive too.
    const db = new Database(join(home, "state.db"));
    db.prepare("UPDATE health_samples SET database_bytes = 9223372036854775807").run();
    db.close();
    const admin = await connect(PG_ADMIN_URL);
    const name = `hearth_t_icu_${process.pid}_${Date.now()}`;
    await admin.query(
      `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`,
    );
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${name}`;
    try {
      const there = await runCli(["--json", "migrate", "--to", u.toString()], { home, env });
      expect(there.stderr).toBe("");
      expect(there.code).toBe(0);
      const back = join(tempHome(), "back.db");
      const again = await runCli(["--json", "migrate", "--from", u.toString(), "--to", back], {
        home,
        env,
      });
      expect(again.stderr).toBe("");
      expect(again.code).toBe(0);
      expect(sqliteRows(back)).toEqual(sqliteRows(join(home, "state.db")));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });

  it("resumes after a kill -9 mid-copy, without duplicates", async () => {
    const home = await filledHome(async (store) => {
      const s = await store.sessions.create({ title: "bulk" });
      for (let i = 0; i < 6; i++)
        await store.messages.appendBatch(
          s.id,
          Array.from({ length: 50 }, (_, j) => ({
            role: "user" as const,
            content: `bulk ${i} ${j}`,
          })),
        );
    });
    const url = await freshPgDatabase();
    const killed = await runCli(["migrate", "--to", url, "--chunk-rows", "20"], {
      home,
      env: { HEARTH_FAILPOINTS: "migrate-to.mid-copy=kill@5" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const partial = await pgCounts(url);
    const source = sqliteRows(join(home, "state.db"));
    expect(partial.messages).toBeGreaterThan(0);
    expect(partial.messages).toBeLessThan(source.messages!.length);

    const plan = await runCli(["--json", "migrate", "--to", url, "--dry-run"], { home, env });
    expect(plan.code).toBe(0);
    expect(plan.json()).toMatchObject({ dryRun: true, resumed: true, copied: 0, verified: false });
    expect(await pgCounts(url)).toEqual(partial);

    const resumed = await runCli(["--json", "migrate", "--to", url, "--chunk-rows", "20"], {
      home,
      env,
    });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    const r = resumed.json();
    expect(r.resumed).toBe(true);
    expect(r.copied).toBeLessThan(r.rows);
    expect(await pgCounts(url)).toEqual(
      Object.fromEntries(PG_TABLES.map((t) => [t, source[t]!.length])),
    );
    const c = await connect(url);
    const progress = await c.query(
      "SELECT count(*)::int AS n FROM meta WHERE key LIKE 'hearth.migrate%'",
    );
    expect(progress.rows[0].n).toBe(0);

    // Done: the same command again finds a non-empty target and refuses.
    const again = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error.code).toBe("HEARTH_TARGET_NOT_EMPTY");
  });

  it("the way back killed mid-copy publishes nothing; the next run removes its staging and finishes", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    expect((await runCli(["migrate", "--to", url], { home, env })).code).toBe(0);
    const dir = dirname(tempHome());
    const target = join(dir, "back.db");
    const killed = await runCli(["migrate", "--from", url, "--to", target, "--chunk-rows", "10"], {
      home,
      env: { HEARTH_FAILPOINTS: "migrate-to.mid-copy=kill@3" },
    });
    expect(killed.signal).toBe("SIGKILL");
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.startsWith(".hearth-migrate-back.db-"))).toHaveLength(
      1,
    );
    const again = await runCli(["--json", "migrate", "--from", url, "--to", target], {
      home,
      env,
    });
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(readdirSync(dir).filter((n) => n.startsWith(".hearth-migrate-"))).toEqual([]);
    expect(sqliteRows(target)).toEqual(sqliteRows(join(home, "state.db")));
  });

  it("refuses a non-empty target and changes nothing; --force copies over it", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    const empty = tempHome();
    await (await openStore({ home: empty, env: {} })).close();
    const first = await runCli(["migrate", "--to", url], { home: empty, env });
    expect(first.code).toBe(0); // an empty store migrated: the schema exists, no sessions yet
    const c = await connect(url);
    await c.query(
      "INSERT INTO sessions (id, profile, source, created_at, updated_at, last_activity_at) VALUES ('foreign', 'default', 'cli', 1, 1, 1)",
    );
    const before = await c.query("SELECT * FROM sessions ORDER BY id");
    const refused = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(refused.code).toBe(1);
    const err = JSON.parse(refused.stderr).error;
    expect(err.code).toBe("HEARTH_TARGET_NOT_EMPTY");
    expect(err.message).toContain("sessions");
    expect((await c.query("SELECT * FROM sessions ORDER BY id")).rows).toEqual(before.rows);
    expect(await pgCounts(url)).toMatchObject({ sessions: 1, messages: 0 });

    const dry = await runCli(["--json", "migrate", "--to", url, "--force", "--dry-run"], {
      home,
      env,
    });
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({ dryRun: true, emptiedTarget: true, resumed: false });
    expect((await c.query("SELECT * FROM sessions ORDER BY id")).rows).toEqual(before.rows);

    const forced = await runCli(["--json", "migrate", "--to", url, "--force"], { home, env });
    expect(forced.code).toBe(0);
    expect(forced.json().emptiedTarget).toBe(true);
    const ids = (await c.query('SELECT id FROM sessions ORDER BY id COLLATE "C"')).rows.map(
      (r) => r.id,
    );
    expect(ids).not.toContain("foreign");
    expect(ids).toContain("zzz-parent");
  });

  it("never reports a copy whose content differs from its source (verification reads the target back)", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    const empty = tempHome();
    await (await openStore({ home: empty, env: {} })).close();
    expect((await runCli(["migrate", "--to", url], { home: empty, env })).code).toBe(0);
    // A foreign trigger on the target changes what is written: the copy runs to its end, the hashes differ.
    const c = await connect(url);
    await c.query(`CREATE FUNCTION tamper() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN NEW.value := NEW.value || '!'; RETURN NEW; END $$`);
    await c.query(
      "CREATE TRIGGER tamper BEFORE INSERT ON meta FOR EACH ROW WHEN (NEW.key NOT LIKE 'hearth.%') EXECUTE FUNCTION tamper()",
    );
    const copied = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(copied.code).toBe(1);
    const err = JSON.parse(copied.stderr).error;
    expect(err.code).toBe("HEARTH_MIGRATE_MISMATCH");
    expect(err.details.tables.map((t: { table: string }) => t.table)).toEqual(["meta"]);
    expect(copied.stdout).toBe("");
    // Not acknowledged: the progress row is still there, so the copy is not mistaken for a finished one.
    const progress = await c.query(
      "SELECT count(*)::int AS n FROM meta WHERE key = 'hearth.migrate-to.progress'",
    );
    expect(progress.rows[0].n).toBe(1);
  });

  it("one copy at a time into a database: a second is refused (exit 3), naming the first", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    const holder = new pg.Client({
      connectionString: url,
      application_name: "hearth:cli:777@other-host",
    });
    await holder.connect();
    clients.push(holder);
    await holder.query("SELECT pg_advisory_lock($1, 2)", [0x68656172]);
    const refused = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(refused.code).toBe(3);
    const err = JSON.parse(refused.stderr).error;
    expect(err.code).toBe("HEARTH_STORE_HELD");
    expect(err.message).toContain("hearth:cli:777@other-host");
    expect(await pgCounts(url)).toMatchObject({ sessions: 0, messages: 0 });
  });

  it("refuses a source row PostgreSQL cannot hold, naming table and id; nothing is copied", async () => {
    const home = await filledHome();
    const db = new Database(join(home, "state.db"));
    const { id } = db.prepare("SELECT max(id) AS id FROM messages").get() as { id: number };
    db.prepare("UPDATE messages SET content = 'a' || char(0) || 'b' WHERE id = ?").run(id);
    db.close();
    const url = await freshPgDatabase();
    const dry = await runCli(["--json", "migrate", "--to", url, "--dry-run"], { home, env });
    expect(JSON.parse(dry.stderr).error.code).toBe("HEARTH_VALUE_UNREPRESENTABLE");
    const refused = await runCli(["--json", "migrate", "--to", url], { home, env });
    expect(refused.code).toBe(1);
    const err = JSON.parse(refused.stderr).error;
    expect(err.code).toBe("HEARTH_VALUE_UNREPRESENTABLE");
    expect(err.message).toContain(`messages row id="${id}"`);
    const c = await connect(url);
    const tables = await c.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(tables.rows[0].n).toBe(0);
  });

  it("bad URL, wrong password and a server that is down: coded errors, exit 1, nothing written", async () => {
    const home = await filledHome();
    const url = await freshPgDatabase();
    const badUrl = await runCli(["--json", "migrate", "--to", "postgres://nohost"], { home, env });
    expect(badUrl.code).toBe(1);
    expect(JSON.parse(badUrl.stderr).error.code).toBe("HEARTH_STORE_URL_INVALID");

    const wrong = new URL(url);
    wrong.password = "wrong-password";
    const auth = await runCli(["--json", "migrate", "--to", wrong.toString()], { home, env });
    expect(auth.code).toBe(1);
    const authErr = JSON.parse(auth.stderr).error;
    expect(authErr.code).toBe("HEARTH_PG_AUTH");
    expect(auth.stderr).not.toContain("wrong-password");

    const down = new URL(url);
    down.port = "1";
    const unavailable = await runCli(["--json", "migrate", "--to", down.toString()], { home, env });
    expect(unavailable.code).toBe(1);
    expect(JSON.parse(unavailable.stderr).error.code).toBe("HEARTH_PG_UNAVAILABLE");

    // SQLite to SQLite is not this command's work.
    const usage = await runCli(["--json", "migrate", "--to", join(home, "x.db")], { home, env });
    expect(usage.code).toBe(2);
    expect(existsSync(join(home, "x.db"))).toBe(false);
    expect(PG_ADMIN_URL).toBeTruthy();
  });
});

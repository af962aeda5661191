/**
 * A transaction whose connection the server ends (pg_terminate_backend)
 * before its COMMIT was sent runs again on another connection
 * (src/store/pg/pool.ts): the call succeeds and its message is stored
 * once. One ended while its COMMIT runs is reported as
 * HEARTH_PG_UNAVAILABLE and not run again, since it may have committed.
 *
 * A trigger holds the first attempt's INSERT (or, deferred, its COMMIT) in
 * pg_sleep, so the test ends that backend at a known point. A sequence
 * counts the attempts: a rolled-back transaction does not take back its
 * nextval.
 *
 * A read (SELECT) cut the same way runs again too: it has no effect to
 * repeat. A write sent as one statement outside a transaction is not: it
 * may have committed. A view over the table holds the first read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { createPool, pgDb } from "../../../src/store/pg/pool.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled, withPgClient } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

const HOLD_FIRST_ATTEMPT = `
  CREATE SEQUENCE cut_attempts;
  CREATE FUNCTION cut_hold() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF nextval('cut_attempts') = 1 THEN PERFORM pg_sleep(60); END IF;
    RETURN NEW;
  END $$;`;

/** A store on a fresh database whose first INSERT into `table` (or its COMMIT, `atCommit`) sleeps until ended. */
async function storeWithHold(
  atCommit: boolean,
  table = "messages",
): Promise<{ store: Store; url: string }> {
  const url = await freshPgDatabase();
  const store = await openStore({ home: tempHome(), url, env: {} });
  stores.push(store);
  await withPgClient(url, (c) =>
    c.query(
      HOLD_FIRST_ATTEMPT +
        (atCommit
          ? `CREATE CONSTRAINT TRIGGER cut_hold AFTER INSERT ON ${table}
             DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cut_hold();`
          : `CREATE TRIGGER cut_hold BEFORE INSERT ON ${table}
             FOR EACH ROW EXECUTE FUNCTION cut_hold();`),
    ),
  );
  return { store, url };
}

/** Waits for the backend asleep in the trigger, ends it, and returns the statement it was running. */
async function endSleeper(url: string): Promise<string> {
  return withPgClient(url, async (c) => {
    let found: { pid: number; query: string } | undefined;
    await until(
      "a backend asleep in the trigger",
      async () => {
        const { rows } = await c.query<{ pid: number; query: string }>(
          `SELECT pid, query FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event = 'PgSleep'`,
        );
        found = rows[0];
        return found !== undefined;
      },
      20_000,
    );
    const sleeper = found as { pid: number; query: string };
    await c.query("SELECT pg_terminate_backend($1)", [sleeper.pid]);
    return sleeper.query;
  });
}

async function attempts(url: string): Promise<number> {
  return withPgClient(url, async (c) =>
    Number((await c.query("SELECT last_value FROM cut_attempts")).rows[0].last_value),
  );
}

async function stored(url: string, content: string): Promise<number> {
  return withPgClient(url, async (c) =>
    Number(
      (await c.query("SELECT count(*) AS n FROM messages WHERE content = $1", [content])).rows[0].n,
    ),
  );
}

describe.skipIf(!pgEnabled)("a connection ended under a transaction", () => {
  it("before the COMMIT was sent: the transaction runs again on another connection and stores once", async () => {
    const { store, url } = await storeWithHold(false);
    const session = await store.sessions.create({ title: "cut" });
    const append = store.messages.append(session.id, { role: "user", content: "cut mid-insert" });
    const statement = await endSleeper(url);
    expect(statement).toMatch(/INSERT INTO messages/i);

    const message = await append;
    expect(message.content).toBe("cut mid-insert");
    expect(await attempts(url)).toBe(2);
    expect(await stored(url, "cut mid-insert")).toBe(1);
    // The store goes on working on the pool's other connections.
    await store.messages.append(session.id, { role: "assistant", content: "after" });
    expect((await store.messages.load(session.id)).map((m) => m.content)).toEqual([
      "cut mid-insert",
      "after",
    ]);
  });

  it("a lost presence connection too: the claim's owner is held again before the transaction runs again", async () => {
    const { store, url } = await storeWithHold(false, "meta");
    const presence = {
      claims: "owner-a",
      ownerOf: (value: string) => (JSON.parse(value) as { owner?: string }).owner,
    };
    const claim = store.meta.compareAndSet(
      "turn-lease:cut",
      (current) => (current === null ? JSON.stringify({ owner: "owner-a" }) : undefined),
      presence,
    );
    // A server restart ends every connection: here the presence's first,
    // seen gone by the store, then the transaction's, asleep in its INSERT.
    const presenceHolders = () =>
      withPgClient(url, async (c) =>
        (
          await c.query<{ pid: number }>(
            `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE a.datname = current_database() AND l.locktype = 'advisory'
               AND l.mode = 'ShareLock' AND l.granted`,
          )
        ).rows.map((r) => r.pid),
      );
    await until("the claim's presence held", async () => (await presenceHolders()).length === 1);
    const [first] = await presenceHolders();
    await withPgClient(url, (c) => c.query("SELECT pg_terminate_backend($1)", [first]));
    await until("the presence connection gone", async () => (await presenceHolders()).length === 0);
    await new Promise((r) => setTimeout(r, 200)); // the store's client reads its end
    await endSleeper(url);

    expect(await claim).toBe(true);
    expect(await attempts(url)).toBe(2);
    // The lease names owner-a, and the server sees owner-a alive again, on another connection.
    const holders = await presenceHolders();
    expect(holders).toHaveLength(1);
    expect(holders[0]).not.toBe(first);
  });

  it("while its COMMIT runs: reported as HEARTH_PG_UNAVAILABLE, never run again", async () => {
    const { store, url } = await storeWithHold(true);
    const session = await store.sessions.create({ title: "cut" });
    const append = store.messages.append(session.id, { role: "user", content: "cut at commit" });
    const failed = append.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(await endSleeper(url)).toMatch(/^\s*COMMIT\s*$/i);

    expect(await failed).toMatchObject({ code: "HEARTH_PG_UNAVAILABLE" });
    expect(await attempts(url)).toBe(1);
    // The backend was ended before its commit record: nothing landed, and nothing was acknowledged.
    expect(await stored(url, "cut at commit")).toBe(0);
  });
});

/** Puts a view in front of `table` whose first row sleeps until ended (the table's rows are kept). */
async function holdFirstRead(url: string, table: string): Promise<void> {
  await withPgClient(url, (c) =>
    c.query(`
      CREATE SEQUENCE cut_attempts;
      CREATE FUNCTION cut_read_hold() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF nextval('cut_attempts') = 1 THEN PERFORM pg_sleep(60); END IF;
        RETURN true;
      END $$;
      ALTER TABLE ${table} RENAME TO ${table}_held;
      CREATE VIEW ${table} AS SELECT * FROM ${table}_held WHERE cut_read_hold();`),
  );
}

describe.skipIf(!pgEnabled)("a connection ended under a read", () => {
  it("a transcript load runs again on another connection and returns every message", async () => {
    const url = await freshPgDatabase();
    const store = await openStore({ home: tempHome(), url, env: {} });
    stores.push(store);
    const session = await store.sessions.create({ title: "read cut" });
    await store.messages.append(session.id, { role: "user", content: "one" });
    await store.messages.append(session.id, { role: "assistant", content: "two" });
    await holdFirstRead(url, "messages");

    const load = store.messages.load(session.id);
    expect(await endSleeper(url)).toMatch(/FROM messages WHERE session_id/);
    expect((await load).map((m) => m.content)).toEqual(["one", "two"]);
    // The first attempt's one row, then the second attempt's two.
    expect(await attempts(url)).toBe(3);
  });

  it("a session read (one query on the pool) runs again too", async () => {
    const url = await freshPgDatabase();
    const store = await openStore({ home: tempHome(), url, env: {} });
    stores.push(store);
    const session = await store.sessions.create({ title: "read cut" });
    await holdFirstRead(url, "sessions");

    const got = store.sessions.get(session.id);
    expect(await endSleeper(url)).toMatch(/FROM sessions WHERE id/);
    expect((await got)?.title).toBe("read cut");
    expect(await attempts(url)).toBe(2);
  });

  it("a write sent as one statement is reported, never run again: it may have committed", async () => {
    const url = await freshPgDatabase();
    await withPgClient(url, (c) =>
      c.query(`${HOLD_FIRST_ATTEMPT}
        CREATE TABLE cut_rows (id int PRIMARY KEY, n int NOT NULL);
        INSERT INTO cut_rows VALUES (1, 0);
        CREATE TRIGGER cut_hold BEFORE UPDATE ON cut_rows FOR EACH ROW EXECUTE FUNCTION cut_hold();`),
    );
    const pool = createPool(url, { max: 2 });
    try {
      const db = pgDb(pool, url, "default");
      const update = db.query("bump a row", "UPDATE cut_rows SET n = n + 1 WHERE id = 1").then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(await endSleeper(url)).toMatch(/^UPDATE cut_rows/);
      expect(await update).toMatchObject({ code: "HEARTH_PG_UNAVAILABLE" });
      expect(await attempts(url)).toBe(1);
    } finally {
      await pool.end();
    }
  });
});

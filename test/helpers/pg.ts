/**
 * PostgreSQL for tests: a fresh database per call on the server named by
 * $HEARTH_TEST_PG_URL. The global setup sets it to an embedded server it
 * starts when it is unset and no server answers at DEFAULT_PG_URL (or when
 * HEARTH_TEST_PG=embedded). No server is a test failure, not a skip: set
 * HEARTH_TEST_PG=skip to leave the PostgreSQL tests out on purpose.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { findTool } from "../../src/ops/pg/tools.js";
import { afterThisFile, afterThisTest } from "./cleanups.js";
import { DEFAULT_PG_URL } from "./pg-url.js";

export const PG_ADMIN_URL = process.env.HEARTH_TEST_PG_URL ?? DEFAULT_PG_URL;

/** True unless HEARTH_TEST_PG=skip: PostgreSQL tests then run with describe.skipIf(!pgEnabled). */
export const pgEnabled = process.env.HEARTH_TEST_PG !== "skip";

/**
 * PostgreSQL's client tools (pg_dump, pg_restore) on PATH: hearth's
 * PostgreSQL backups run them, and no npm package ships them (the embedded
 * server is the server alone). The tests that back up a PostgreSQL store run
 * where they are (CI installs Debian's postgresql-client) and are skipped,
 * saying so, where they are not;
 * HEARTH_TEST_PG_TOOLS=require (.ci/run sets it) makes their absence a failure.
 */
export const pgToolsFound = ["pg_dump", "pg_restore"].every((tool) => {
  try {
    findTool(tool as "pg_dump" | "pg_restore"); // hearth's own lookup
    return true;
  } catch {
    return false;
  }
});
if (pgEnabled && !pgToolsFound) {
  if (process.env.HEARTH_TEST_PG_TOOLS === "require")
    throw new Error(
      "pg_dump/pg_restore are not on PATH and HEARTH_TEST_PG_TOOLS=require: install postgresql-client",
    );
  console.warn(
    "pg_dump/pg_restore are not on PATH: the PostgreSQL backup tests are skipped (apt-get install postgresql-client)",
  );
}

const created: string[] = [];

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL for tests is not reachable at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${String(err)}). ` +
        "Start it, or unset HEARTH_TEST_PG_URL for an embedded server; HEARTH_TEST_PG=skip leaves these tests out.",
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Run `fn` on a connection of its own to `url`, ended after. */
export async function withPgClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A connection of its own to `url` (another host, for the server), ended after the test. */
export async function pgClientForTest(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  afterThisTest(() => c.end());
  return c;
}

/** A new, empty database; dropped after the test file. Returns its URL. */
export async function freshPgDatabase(): Promise<string> {
  const name = `hearth_t_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  if (created.length === 0) afterThisFile(dropCreated);
  created.push(name);
  return withDatabase(PG_ADMIN_URL, name);
}

// Each DROP DATABASE waits for a checkpoint of the server: on a loaded
// machine a file's dozen of them took longer than the default 30 s hook
// bound (setup.ts gives the file's cleanups 180 s).
async function dropCreated(): Promise<void> {
  const names = created.splice(0);
  if (names.length === 0) return;
  await admin(async (c) => {
    for (const name of names) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

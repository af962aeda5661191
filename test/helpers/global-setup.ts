import { fileURLToPath } from "node:url";
import pg from "pg";
import { freshDist } from "./build-dist.js";
import { type EmbeddedPg, startEmbeddedPg } from "./embedded-pg.js";
import { DEFAULT_PG_URL } from "./pg-url.js";

// vitest globalSetup: once per run, before any test file.
// 1. dist/ is rebuilt when a source is newer (build-dist.ts), and no other
//    run in this checkout rebuilds it until this run's teardown.
// 2. The PostgreSQL tests get a server (docs/testing.md):
//    HEARTH_TEST_PG=skip       none, the PostgreSQL tests are left out;
//    HEARTH_TEST_PG_URL=…      that server;
//    HEARTH_TEST_PG=embedded   an embedded server (embedded-pg.ts), always;
//    otherwise                 the default URL's server when it answers,
//                              else an embedded one.
//    An embedded server's URL reaches the test files as HEARTH_TEST_PG_URL
//    (the workers start after this and inherit it); teardown stops it.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function answers(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (err) {
    return String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

async function pgServer(): Promise<EmbeddedPg | undefined> {
  const mode = process.env.HEARTH_TEST_PG;
  if (mode === "skip") return undefined;
  if (mode !== undefined && mode !== "embedded")
    throw new Error(`HEARTH_TEST_PG=${mode}: expected skip or embedded (or unset)`);
  if (mode === undefined) {
    if (process.env.HEARTH_TEST_PG_URL) return undefined;
    const refused = await answers(DEFAULT_PG_URL);
    if (refused === undefined) return undefined;
    console.log(
      `no PostgreSQL for tests at the default URL (${refused}): starting an embedded one`,
    );
  }
  const started = Date.now();
  const server = await startEmbeddedPg();
  process.env.HEARTH_TEST_PG_URL = server.url;
  console.log(
    `embedded PostgreSQL at ${server.url.replace(/:[^:@/]*@/, ":***@")} (${Date.now() - started} ms)`,
  );
  return server;
}

export default async function setup(): Promise<() => Promise<void>> {
  const dist = await freshDist(ROOT);
  let server: EmbeddedPg | undefined;
  try {
    server = await pgServer();
  } catch (err) {
    dist.release();
    throw err;
  }
  return async () => {
    try {
      await server?.stop();
    } finally {
      dist.release();
    }
  };
}

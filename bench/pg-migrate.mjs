// hearth migrate --to, measured: a SQLite store of N messages (default
// 100,000) copied to a fresh PostgreSQL database, verified, and back to a
// new SQLite file. The baseline, in the same process on the same server:
// raw `pg` doing the same INSERTs (multi-row, 1000 rows per transaction,
// rows read from the same SQLite file) with no hashing and no progress row.
//
//   npm run build --silent && node bench/pg-migrate.mjs [--messages N]
//
// Needs a PostgreSQL server: $HEARTH_TEST_PG_URL (default: the local
// hearth_test cluster .ci/run starts).
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { migrateTo } from "../dist/ops/migrate-to.js";
import { migratePg } from "../dist/store/pg/migrate.js";
import { createPool } from "../dist/store/pg/pool.js";
import { bulkFill, cleanupAll, newStore, tempDir } from "./lib/stores.mjs";

const { values } = parseArgs({ options: { messages: { type: "string", default: "100000" } } });
const total = Number(values.messages);
const ADMIN =
  process.env.HEARTH_TEST_PG_URL ?? "postgres://hearth_test:hearth_test@127.0.0.1:5432/hearth_test";

async function freshDb() {
  const name = `hearth_bench_${randomBytes(5).toString("hex")}`;
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  return { name, url: u.toString() };
}

async function dropDb(name) {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
}

/** Raw pg: the same rows, the same multi-row INSERTs, 1000 per transaction, nothing else. */
async function rawCopy(path, url) {
  const pool = createPool(url, { max: 1, kind: "bench" });
  await migratePg(pool, url);
  const db = new Database(path, { readonly: true });
  const client = await pool.connect();
  const t0 = performance.now();
  let rows = 0;
  for (const table of ["sessions", "messages"]) {
    const cols = db
      .prepare(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name);
    const stmt = db.prepare(`SELECT ${cols.join(", ")} FROM ${table} ORDER BY ${cols[0]}`);
    stmt.raw(true);
    let chunk = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      const params = [];
      const tuples = chunk.map(
        (r) =>
          `(${r.map((v) => {
            params.push(v);
            return `$${params.length}`;
          })})`,
      );
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO ${table} (${cols.join(", ")}) VALUES ${tuples.join(", ")}`,
        params,
      );
      await client.query("COMMIT");
      rows += chunk.length;
      chunk = [];
    };
    for (const r of stmt.iterate()) {
      chunk.push(r);
      if (chunk.length === 1000) await flush();
    }
    await flush();
  }
  const ms = performance.now() - t0;
  client.release();
  db.close();
  await pool.end();
  return { rows, ms };
}

const { home, path } = await newStore("migrate", "normal");
const t0 = performance.now();
bulkFill(path, { total, sessions: Math.max(1, Math.round(total / 200)), seed: 18 });
console.log(`store: ${total} messages built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const raw = await freshDb();
const base = await rawCopy(path, raw.url);
console.log(
  `raw pg INSERTs: ${base.rows} rows in ${base.ms.toFixed(0)} ms = ${Math.round((base.rows * 1000) / base.ms)} rows/s`,
);
await dropDb(raw.name);

const target = await freshDb();
const there = await migrateTo({ home, to: target.url, env: {} });
console.log(
  `hearth migrate --to postgres: ${there.rows} rows in ${there.durationMs} ms = ${there.rowsPerSecond} rows/s (source hashing, copy, progress rows, verification read back)`,
);
console.log(
  `ratio hearth / raw INSERTs (rows/s): ${(there.rowsPerSecond / ((base.rows * 1000) / base.ms)).toFixed(2)}`,
);
const back = join(tempDir("migrate-back"), "back.db");
const returned = await migrateTo({ home, to: back, from: target.url, env: {} });
console.log(
  `hearth migrate --to sqlite: ${returned.rows} rows in ${returned.durationMs} ms = ${returned.rowsPerSecond} rows/s`,
);
await dropDb(target.name);
cleanupAll();

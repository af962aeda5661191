import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import type { SqliteStore } from "../../../src/index.js";
import {
  BLOBS_OF_REFS,
  PARENT_REFS,
  VERSION_REF,
} from "../../../src/store/sqlite/graph-checkpoints.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { tempHome } from "../../helpers/home.js";

const TURNS = 20;

// A builder's graph (a messages channel growing each turn) on a real store,
// with its cost counted: statements per operation and the plan of the value
// lookup, never time. The lookup once read every value of the thread (all
// versions of every channel) to find a checkpoint's few: getTuple and list
// grew with the conversation (issue 44).
it("a LangGraph thread costs a bounded number of statements per put and getTuple, and values are looked up by key", async () => {
  const saver = await HearthSaver.open({ home: tempHome() });
  const store = saver.store as SqliteStore;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({ messages: [new AIMessage(`answer ${s.messages.length}`)] }))
    .addEdge("__start__", "agent")
    .addEdge("agent", "__end__")
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t1" } };
  const uses = (role: "reader" | "writer") => store[internals].uses(role);
  let puts = 0;
  const put = saver.put.bind(saver);
  saver.put = (...args) => {
    puts++;
    return put(...args);
  };
  let putWrites = 0;
  const putWritesOf = saver.putWrites.bind(saver);
  saver.putWrites = (...args) => {
    putWrites++;
    return putWritesOf(...args);
  };
  const writer = store[internals].connection("writer");
  const writerBefore = uses("writer");
  const transactionsBefore = writer.transactions;
  for (let i = 0; i < TURNS; i++)
    await graph.invoke({ messages: [new HumanMessage(`q${i}`)] }, config);
  // 3 puts and 2 putWrites a turn, each one transaction.
  expect(puts / TURNS).toBe(3);
  expect(putWrites / TURNS).toBe(2);
  expect(writer.transactions - transactionsBefore).toBe(puts + putWrites);
  // A put: its parent's refs with their versions (one statement), the
  // changed values (one prepared INSERT), the checkpoint row; the thread's
  // first put has no parent. A putWrites: one prepared INSERT. Nothing else:
  // no search-index bookkeeping (total_changes) and no lookup per unchanged
  // channel (27 statements a turn before, issue 44).
  expect(uses("writer") - writerBefore).toBe(3 * puts - 1 + putWrites);

  const readerBefore = uses("reader");
  const latest = await saver.getTuple(config);
  // The checkpoint row, its values, its pending writes: three statements.
  expect(uses("reader") - readerBefore).toBe(3);
  expect(latest?.checkpoint.channel_values.messages).toHaveLength(2 * TURNS);

  let listed = 0;
  const listBefore = uses("reader");
  for await (const t of saver.list(config, { limit: 500 })) {
    expect(t.checkpoint.channel_values).toBeDefined();
    listed++;
  }
  expect(listed).toBe(3 * TURNS);
  // One page statement, then two lookups per checkpoint.
  expect(uses("reader") - listBefore).toBe(1 + 2 * listed);

  // The values of one checkpoint are found by their whole key, driven by its refs.
  const db = new Database(store.path, { readonly: true });
  const plan = db
    .prepare(`EXPLAIN QUERY PLAN ${BLOBS_OF_REFS}`)
    .all("{}", "t1", "")
    .map((r) => (r as { detail: string }).detail);
  // A put checks its parent's versions on the index alone.
  const parentPlan = db
    .prepare(`EXPLAIN QUERY PLAN ${PARENT_REFS}`)
    .all("{}", "t1", "", "c")
    .map((r) => (r as { detail: string }).detail);
  const versionPlan = db
    .prepare(`EXPLAIN QUERY PLAN ${VERSION_REF}`)
    .all("t1", "", "1", "messages")
    .map((r) => (r as { detail: string }).detail);
  // graph_blobs is a rowid table (schema 14): searches compare small index
  // entries, never the values (a WITHOUT ROWID table keeps them in the
  // cells its searches read whole; "no such column: rowid" there).
  const rowids = db.prepare("SELECT count(rowid) AS n FROM graph_blobs").get() as { n: number };
  db.close();
  expect(rowids.n).toBeGreaterThan(0);
  expect(plan).toEqual([
    expect.stringMatching(/^SCAN r VIRTUAL TABLE/),
    "SEARCH b USING INDEX graph_blobs_by_key (thread_id=? AND checkpoint_ns=? AND checkpoint_id=? AND channel=?)",
  ]);
  expect(parentPlan.filter((d) => / b /.test(d))).toEqual([
    "SEARCH b USING COVERING INDEX graph_blobs_by_version (thread_id=? AND checkpoint_ns=? AND version=? AND channel=? AND checkpoint_id=?) LEFT-JOIN",
  ]);
  expect(versionPlan).toEqual([
    "SEARCH graph_blobs USING COVERING INDEX graph_blobs_by_version (thread_id=? AND checkpoint_ns=? AND version=? AND channel=?)",
  ]);
  await saver.close();
});

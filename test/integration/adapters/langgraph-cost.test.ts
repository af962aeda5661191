import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import type { SqliteStore } from "../../../src/index.js";
import { BLOBS_OF_REFS } from "../../../src/store/sqlite/graph-checkpoints.js";
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
  const writerBefore = uses("writer");
  const putsBefore = puts;
  for (let i = 0; i < TURNS; i++)
    await graph.invoke({ messages: [new HumanMessage(`q${i}`)] }, config);
  const perTurn = (uses("writer") - writerBefore) / TURNS;
  // 3 puts and 2 putWrites a turn; each a transaction of a handful of statements.
  expect((puts - putsBefore) / TURNS).toBe(3);
  expect(perTurn).toBeLessThanOrEqual(30);

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
  db.close();
  expect(plan).toEqual([
    expect.stringMatching(/^SCAN r VIRTUAL TABLE/),
    "SEARCH b USING PRIMARY KEY (thread_id=? AND checkpoint_ns=? AND checkpoint_id=? AND channel=?)",
  ]);
  await saver.close();
});

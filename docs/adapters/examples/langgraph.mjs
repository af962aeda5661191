// A LangGraph graph whose state lives in a hearth store. Run it twice (or
// from two terminals): each run adds a visit to the same thread.
//   npm install hearth @langchain/langgraph @langchain/core
//   node langgraph.mjs [home]
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { HearthSaver } from "hearth/langgraph";

const State = Annotation.Root({
  visits: Annotation({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

const graph = new StateGraph(State)
  .addNode("visit", (state) => ({ visits: [`visit ${state.visits.length + 1} (pid ${process.pid})`] }))
  .addEdge(START, "visit")
  .addEdge("visit", END);

const checkpointer = await HearthSaver.open({ home: process.argv[2] ?? "./.hearth-demo" });
try {
  const app = graph.compile({ checkpointer });
  const config = { configurable: { thread_id: "demo-thread" } };
  const state = await app.invoke({ visits: [] }, config);
  console.log(JSON.stringify({ visits: state.visits }));
  // Every step is a checkpoint: the thread's history, newest first.
  let steps = 0;
  for await (const _ of checkpointer.list(config)) steps++;
  console.log(JSON.stringify({ checkpoints: steps }));
} finally {
  await checkpointer.close();
}

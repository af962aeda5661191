// Workload 11b: the LangGraph checkpoint saver, as a builder uses it: a
// StateGraph whose messages channel grows each turn (a user message in, an
// answer out: 3 checkpoints and 2 pending-write batches a turn), on
// hearth's HearthSaver and on @langchain/langgraph-checkpoint-sqlite's
// SqliteSaver (the baseline), both WAL + synchronous=FULL. Measured: a graph
// turn (puts, putWrites and the getTuple the graph makes), the latest
// getTuple of a long thread, and list() of 500 checkpoints; time and CPU
// per call (this process, every thread), and hearth's statements per turn.
// A put is also timed alone, inside the graph turns (each saver's put
// wrapped: wall time and process CPU from its call to its resolution).
// Counted apart, on turns of their own (never the timed ones): WAL frames
// (pages) each saver's commits write per turn, read from the wal-index.
import { closeSync, mkdirSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { HearthSaver } from "../../dist/adapters/langgraph/index.js";
import { internals } from "../../dist/store/sqlite/store.js";
import { runRounds } from "../lib/inproc.mjs";
import { row } from "../lib/rows.mjs";
import { removeDir, tempDir } from "../lib/stores.mjs";

const WORKLOAD = "11b. adapters (LangGraph checkpoint saver)";
const LIST = 500;

function graphOn(checkpointer) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({
      messages: [new AIMessage(`answer ${s.messages.length}: ${"lorem ipsum ".repeat(20)}`)],
    }))
    .addEdge("__start__", "agent")
    .addEdge("agent", "__end__")
    .compile({ checkpointer });
}

const turn = (graph, thread, i) =>
  graph.invoke(
    { messages: [new HumanMessage(`question ${i}: ${"dolor sit ".repeat(20)}`)] },
    { configurable: { thread_id: thread } },
  );

/** Both savers on files of their own under `dir`, at the same durability. */
async function openSavers(dir) {
  const hearth = await HearthSaver.open({
    home: join(dir, "hearth"),
    config: { durability: { synchronous: "full" } },
  });
  mkdirSync(join(dir, "stock"), { recursive: true });
  const db = new Database(join(dir, "stock", "checkpoints.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  return {
    hearth,
    stock: new SqliteSaver(db),
    files: { hearth: hearth.store.path, stock: join(dir, "stock", "checkpoints.db") },
    close: () => hearth.close().then(() => db.close()),
  };
}

/** mxFrame of the WAL behind `db` (its wal-index header; native byte order). */
function walFrames(db) {
  const fd = openSync(`${db}-shm`, "r");
  try {
    const b = Buffer.alloc(20);
    readSync(fd, b, 0, 20, 0);
    return endianness() === "LE" ? b.readUInt32LE(16) : b.readUInt32BE(16);
  } finally {
    closeSync(fd);
  }
}

/**
 * WAL frames a turn writes on `saver` (its database `db`), over `turns`
 * turns of a new thread: the growth of mxFrame across each put and
 * putWrites (a commit that starts the WAL over counts its own frames).
 */
async function framesPerTurn(saver, db, turns) {
  let frames = 0;
  const methods = ["put", "putWrites"];
  const own = methods.map((m) => saver[m]);
  for (const m of methods) {
    const call = saver[m];
    saver[m] = async (...args) => {
      const before = walFrames(db);
      const out = await call.apply(saver, args);
      const after = walFrames(db);
      frames += after >= before ? after - before : after;
      return out;
    };
  }
  try {
    const graph = graphOn(saver);
    for (let i = 0; i < turns; i++) await turn(graph, "frames", i);
  } finally {
    methods.forEach((m, i) => {
      saver[m] = own[i];
    });
  }
  return frames / turns;
}

/** Start timing `name`'s puts (its wrapper adds to the returned totals). */
function startTiming(timing, name) {
  timing[name] = { ms: 0, cpuMs: 0, n: 0 };
  return timing[name];
}

export async function langgraphWorkload({ sizes, rounds, log }) {
  const turns = sizes.langgraphTurns;
  const dir = tempDir("langgraph");
  const savers = await openSavers(dir);
  const rows = [];
  try {
    // The long thread getTuple and list read: enough turns for a full list of 500.
    const longTurns = Math.ceil(LIST / 3) + 1;
    log(`11b. LangGraph: a ${longTurns}-turn thread on each saver`);
    for (const name of ["hearth", "stock"]) {
      const graph = graphOn(savers[name]);
      for (let i = 0; i < longTurns; i++) await turn(graph, "long", i);
    }
    const store = savers.hearth.store;
    const statements = [];
    // Each saver's put, timed where the graph calls it (rounds of the turns below).
    const puts = { hearth: [], stock: [] };
    const timing = { hearth: undefined, stock: undefined };
    for (const name of ["hearth", "stock"]) {
      const saver = savers[name];
      const put = saver.put.bind(saver);
      saver.put = async (...args) => {
        const t = timing[name];
        if (!t) return put(...args);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const out = await put(...args);
        t.ms += performance.now() - t0;
        const d = process.cpuUsage(cpu0);
        t.cpuMs += (d.user + d.system) / 1000;
        t.n++;
        return out;
      };
    }
    const variants = (fn, setup = () => undefined, teardown = () => undefined) =>
      ["hearth", "stock"].map((name) => ({
        name: name === "stock" ? "ceiling" : name,
        async: true,
        setup: (round, mode) => setup(name, round, mode),
        fn: (ctx, i) => fn(name, ctx, i),
        teardown: (ctx) => teardown(name, ctx),
      }));
    log(`11b. LangGraph: ${turns} graph turns × ${rounds} rounds`);
    const turnsRes = await runRounds({
      rounds,
      iterations: turns,
      warmup: sizes.warmup ? 5 : 0,
      variants: variants(
        (_name, ctx, i) => turn(ctx.graph, ctx.thread, i),
        (name, round, mode) => ({
          graph: graphOn(savers[name]),
          thread: `r${round}-${mode}`,
          counted: name === "hearth" && mode !== "warmup",
          before: store[internals].uses("writer"),
          timed: mode === "warmup" ? undefined : startTiming(timing, name),
        }),
        (name, ctx) => {
          if (ctx.counted) statements.push((store[internals].uses("writer") - ctx.before) / turns);
          if (ctx.timed) {
            timing[name] = undefined;
            puts[name].push({
              meanMs: ctx.timed.ms / ctx.timed.n,
              cpuMs: ctx.timed.cpuMs / ctx.timed.n,
            });
          }
        },
      ),
    });
    log(`11b. LangGraph: latest getTuple and list(${LIST}) × ${rounds} rounds`);
    const long = { configurable: { thread_id: "long" } };
    const getRes = await runRounds({
      rounds,
      iterations: sizes.adapterCalls / 10,
      warmup: sizes.warmup ? 5 : 0,
      variants: variants((name) => savers[name].getTuple(long)),
    });
    let listed = 0;
    const listRes = await runRounds({
      rounds,
      iterations: 3,
      variants: variants(async (name) => {
        listed = 0;
        for await (const _ of savers[name].list(long, { limit: LIST })) listed++;
      }),
    });
    if (listed !== LIST) throw new Error(`11b. list returned ${listed}, expected ${LIST}`);
    const common = { workload: WORKLOAD, better: "lower", baselines: { ceiling: "SqliteSaver" } };
    const target = {
      text: "≤ 1.0× SqliteSaver (CPU)",
      kind: "ceiling",
      op: "<=",
      value: 1,
      basis: "median",
    };
    const add = (metric, res) => {
      const figures = [
        ["time per call", "meanMs", {}],
        ["CPU per call", "cpuMs", { target }],
      ];
      for (const [what, key, extra] of figures)
        rows.push(
          row({
            ...common,
            metric: `${metric}: ${what}`,
            unit: "ms",
            hearth: res.hearth.map((r) => r[key]),
            ceiling: res.ceiling.map((r) => r[key]),
            ...extra,
          }),
        );
    };
    add("graph turn (3 puts, 2 putWrites, 1 getTuple)", turnsRes);
    add("put (timed inside the graph turns)", { hearth: puts.hearth, ceiling: puts.stock });
    add(`latest getTuple (${longTurns * 3}-checkpoint thread)`, getRes);
    add(`list of ${LIST}`, listRes);
    log(`11b. LangGraph: WAL frames per turn, ${turns} turns on each saver`);
    const frames = { hearth: [], stock: [] };
    for (const name of ["hearth", "stock"])
      frames[name].push(await framesPerTurn(savers[name], savers.files[name], turns));
    rows.push(
      row({
        ...common,
        metric: `WAL frames (pages) written per graph turn, ${turns}-turn thread (counted)`,
        unit: "frames",
        hearth: frames.hearth,
        ceiling: frames.stock,
      }),
    );
    rows.push(
      row({
        workload: WORKLOAD,
        metric: "hearth statements per graph turn (counted)",
        unit: "statements",
        better: "lower",
        hearth: statements,
      }),
    );
  } finally {
    await savers.close();
    removeDir(dir);
  }
  return rows;
}

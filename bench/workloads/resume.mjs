// Workload 5: resume a session, i.e. load its 10,000-message transcript
// (store.messages.load) vs the same SELECT on a raw read-only connection
// (ceiling) vs a new read-write connection per load (naive). Two
// transcripts: agent-like messages (~650 bytes, 6.5 MB in all) and short
// chat turns (~65 bytes).
import { openStore } from "../../dist/index.js";
import { AGENT_SHAPES, CHAT_SHAPES } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { ceilingReader, naive } from "../lib/sql.mjs";
import { bulkFill, newStore, removeDir } from "../lib/stores.mjs";

const TOTAL = 10_000;
const TAIL = 200;
// `LIMIT +?` as hearth binds it (tail.mjs says why).
const TAIL_SQL =
  "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT +?";

async function measure({ label, shapes, iterations, rounds, warm, log }) {
  const { home, path } = await newStore("resume", "full");
  const [id] = bulkFill(path, { total: TOTAL, sessions: 1, seed: 5, shapes });
  let loaded = 0;
  try {
    const res = await runRounds({
      rounds,
      iterations,
      warmup: warm ? 2 : 0,
      log,
      variants: [
        {
          name: "hearth",
          async: true,
          setup: () => openStore({ home }),
          fn: async (store) => {
            loaded = (await store.messages.load(id)).length;
          },
          teardown: (store) => store.close(),
        },
        {
          name: "ceiling",
          async: false,
          setup: () => ceilingReader(path),
          fn: (r) => r.load(id),
          teardown: (r) => r.close(),
        },
        {
          name: "naive",
          async: false,
          setup: () => naive(path, "full"),
          fn: (r) => r.load(id),
        },
      ],
    });
    if (loaded !== TOTAL) throw new Error(`resume loaded ${loaded} messages, expected ${TOTAL}`);
    const workload = "5. resume (load 10k messages)";
    const get = (key) => ({
      hearth: res.hearth.map((r) => r[key]),
      ceiling: res.ceiling.map((r) => r[key]),
      naive: res.naive.map((r) => r[key]),
    });
    const tail = await runRounds({
      rounds,
      iterations: iterations * 10,
      warmup: warm ? 20 : 0,
      log,
      variants: [
        {
          name: "hearth",
          async: true,
          setup: () => openStore({ home }),
          fn: async (store) => {
            loaded = (await store.messages.tail(id, TAIL)).length;
          },
          teardown: (store) => store.close(),
        },
        {
          name: "ceiling",
          async: false,
          setup: () => {
            const r = ceilingReader(path);
            return { r, tail: r.db.prepare(TAIL_SQL) };
          },
          fn: (x) => x.tail.all(id, TAIL).reverse(),
          teardown: (x) => x.r.close(),
        },
      ],
    });
    if (loaded !== TAIL) throw new Error(`tail loaded ${loaded} messages, expected ${TAIL}`);
    return [
      row({
        workload,
        metric: `${label}: p50 tail of ${TAIL}`,
        unit: "ms",
        better: "lower",
        hearth: tail.hearth.map((r) => r.p50),
        ceiling: tail.ceiling.map((r) => r.p50),
        target: { text: "< 2 ms", kind: "absolute", op: "<", value: 2, basis: "median" },
      }),
      row({
        workload,
        metric: `${label}: p50 load time`,
        unit: "ms",
        better: "lower",
        ...get("p50"),
        // Issue 15 restated this target: the first suite's "< 15 ms" was below
        // what raw better-sqlite3 itself takes for the same SELECT * (~45-55 ms
        // here), so no store could meet it; the load is judged against raw.
        target: {
          text: "≤ 0.8× raw SELECT *",
          kind: "ceiling",
          op: "<=",
          value: 0.8,
          basis: "median",
        },
      }),
      row({
        workload,
        metric: `${label}: p99 load time`,
        unit: "ms",
        better: "lower",
        ...get("p99"),
      }),
      ...costRows({ workload, what: `${label}: load`, res }),
      ...costRows({ workload, what: `${label}: tail of ${TAIL}`, res: tail }),
    ];
  } finally {
    removeDir(home);
  }
}

export async function resumeWorkload({ sizes, rounds, log }) {
  const iterations = sizes.resumeLoads;
  const rows = [];
  for (const [label, shapes] of [
    ["agent messages (~650 B)", AGENT_SHAPES],
    ["chat turns (~65 B)", CHAT_SHAPES],
  ]) {
    log(`5. resume, ${label}: ${iterations} loads of ${TOTAL} messages × ${rounds} rounds`);
    rows.push(...(await measure({ label, shapes, iterations, rounds, warm: sizes.warmup, log })));
  }
  return rows;
}

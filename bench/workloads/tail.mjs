// Workload 11: an agent loop's read, the last 200 messages of a session
// (store.messages.tail), from a 10k-message session and from a session
// in a 1M-message store, vs raw better-sqlite3 running the same keyset
// query on a read-only connection (ceiling). hearth's tail maps each row
// to a Message and reverses to oldest-first; the ceiling does the same
// reverse but returns raw rows. Target: >= 1/1.2 of the ceiling's rate.
import Database from "better-sqlite3";
import { openStore } from "../../dist/index.js";
import { AGENT_SHAPES } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { bulkFill, newStore, removeDir } from "../lib/stores.mjs";

const TAIL = 200;
// messages.ts: load(id, { limit, order: "newest-first" }), then reverse.
// `LIMIT +?` as hearth binds it: a bare bound limit has SQLite prepare the
// statement again on every call, work hearth does not do.
export const TAIL_SQL =
  "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY ordinal DESC LIMIT +?";

async function measure({ label, total, sessions, iterations, rounds, warm, log }) {
  const { home, path } = await newStore("tail", "full");
  log(`13. tail: filling ${total.toLocaleString("en-US")} messages in ${sessions} session(s)`);
  const ids = bulkFill(path, { total, sessions, seed: 9, shapes: AGENT_SHAPES });
  const id = ids[ids.length - 1];
  let got = 0;
  try {
    const res = await runRounds({
      rounds,
      iterations,
      warmup: warm ? 20 : 0,
      log,
      variants: [
        {
          name: "hearth",
          async: true,
          setup: () => openStore({ home }),
          fn: async (store) => {
            got = (await store.messages.tail(id, TAIL)).length;
          },
          teardown: (store) => store.close(),
        },
        {
          name: "ceiling",
          async: false,
          setup: () => {
            const db = new Database(path, { readonly: true, fileMustExist: true });
            return { db, stmt: db.prepare(TAIL_SQL) };
          },
          fn: (c) => c.stmt.all(id, TAIL).reverse(),
          teardown: (c) => c.db.close(),
        },
      ],
    });
    if (got !== TAIL) throw new Error(`tail returned ${got} messages, expected ${TAIL}`);
    const rate = (name) => res[name].map((r) => 1000 / r.meanMs);
    return [
      row({
        workload: "13. tail of 200 (agent loop read)",
        metric: `${label}: tails/s`,
        unit: "tail/s",
        better: "higher",
        hearth: rate("hearth"),
        ceiling: rate("ceiling"),
        target: {
          text: ">= 1/1.2 of ceiling",
          kind: "ceiling",
          op: ">=",
          value: 1 / 1.2,
          basis: "median",
        },
      }),
      row({
        workload: "13. tail of 200 (agent loop read)",
        metric: `${label}: p50 tail time`,
        unit: "ms",
        better: "lower",
        hearth: res.hearth.map((r) => r.p50),
        ceiling: res.ceiling.map((r) => r.p50),
      }),
      ...costRows({ workload: "13. tail of 200 (agent loop read)", what: `${label}: tail`, res }),
    ];
  } finally {
    removeDir(home);
  }
}

export async function tailWorkload({ sizes, rounds, log }) {
  const rows = [];
  for (const [label, total, sessions] of [
    ["10k-message session", 10_000, 1],
    [
      `${(sizes.tailLargeMessages / 1e6).toLocaleString("en-US")}M-message store`,
      sizes.tailLargeMessages,
      10,
    ],
  ]) {
    log(`13. tail, ${label}: ${sizes.tailCalls} tails × ${rounds} rounds`);
    rows.push(
      ...(await measure({
        label,
        total,
        sessions,
        iterations: sizes.tailCalls,
        rounds,
        warm: sizes.warmup,
        log,
      })),
    );
  }
  return rows;
}

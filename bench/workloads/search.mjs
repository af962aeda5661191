// Workload 6: full-text search over a large generated store (1,000,000
// messages in full mode). store.search vs the same SQL on a raw read-only
// connection (ceiling) vs a new read-write connection per query (naive).
// The store is built here and handed on to the maintenance workload.
import { openStore } from "../../dist/index.js";
import { ftsQuery, GENERATOR_VERSION, queries } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { ceilingReader, naive } from "../lib/sql.mjs";
import { bulkFill, newStore, storeSize } from "../lib/stores.mjs";

/** Build the large store: hearth creates it, raw SQL fills it (setup only, not timed as a figure). */
export async function buildLargeStore({ messages, sessions, log }) {
  const t0 = performance.now();
  const { home, path } = await newStore("large", "full");
  let shown = 0;
  bulkFill(path, {
    total: messages,
    sessions,
    seed: 6,
    onProgress: (done, total) => {
      if (done - shown >= total / 4 || done === total) {
        shown = done;
        log(`  generating: ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")}`);
      }
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  const bytes = storeSize(path);
  log(
    `  large store: ${messages.toLocaleString("en-US")} messages, ${(bytes / 2 ** 20).toFixed(0)} MiB, built in ${seconds.toFixed(1)} s (generator v${GENERATOR_VERSION}, not cached)`,
  );
  return { home, path, messages, sessions, bytes, buildSeconds: seconds };
}

export async function searchWorkload({ large, sizes, rounds, log }) {
  const count = sizes.searchQueries;
  const list = queries(66, count);
  const fts = list.map(ftsQuery);
  log(
    `6. search: ${count} queries over ${large.messages.toLocaleString("en-US")} messages × ${rounds} rounds`,
  );
  let hits = 0;
  const res = await runRounds({
    rounds,
    iterations: count,
    warmup: sizes.warmup ? 5 : 0,
    log,
    variants: [
      {
        name: "hearth",
        async: true,
        setup: () => openStore({ home: large.home }),
        fn: async (store, i) => {
          hits += (await store.search(list[i % count])).length;
        },
        teardown: (store) => store.close(),
      },
      {
        name: "ceiling",
        async: false,
        setup: () => ceilingReader(large.path),
        fn: (r, i) => r.search(fts[i % count]),
        teardown: (r) => r.close(),
      },
      {
        name: "naive",
        async: false,
        setup: () => naive(large.path, "full"),
        fn: (r, i) => r.search(fts[i % count]),
      },
    ],
  });
  if (hits === 0)
    throw new Error("search found nothing: the generated store or the queries are wrong");
  const workload = `6. search (${large.messages.toLocaleString("en-US")} messages)`;
  const get = (key) => ({
    hearth: res.hearth.map((r) => r[key]),
    ceiling: res.ceiling.map((r) => r[key]),
    naive: res.naive.map((r) => r[key]),
  });
  const at1M = large.messages >= 1_000_000;
  const scope = at1M ? "" : " at 1M (not judged here)";
  return [
    row({
      workload,
      metric: "p50 query",
      unit: "ms",
      better: "lower",
      ...get("p50"),
      target: {
        text: `< 5 ms${scope}`,
        kind: "absolute",
        op: "<",
        value: 5,
        basis: "median",
        applies: at1M,
      },
    }),
    row({
      workload,
      metric: "p99 query",
      unit: "ms",
      better: "lower",
      ...get("p99"),
      target: {
        text: `< 50 ms${scope}`,
        kind: "absolute",
        op: "<",
        value: 50,
        basis: "median",
        applies: at1M,
      },
    }),
    ...costRows({ workload, what: "query", res }),
  ];
}

// Workload 16: how the costs grow with the store. One store grows through
// the sizes (10k, 100k, 1M, 3M messages in full runs; raw SQL in large
// transactions, bench/lib/stores.mjs bulkFill, the same fill as workload 6);
// at each size: search p50/p99 (a mix of common and rare words), tail of
// 200 p50 (a random session each call), single-message appends (one
// transaction each, WAL+FULL), then the file sizes. hearth against raw
// better-sqlite3 running the same SQL (ceiling) on the same store.
// bench/charts.mjs draws these rows as log-log charts (docs/charts/).
import Database from "better-sqlite3";
import { openStore } from "../../dist/index.js";
import { ftsQuery, messageList, mixedQueries, prng } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { ceilingReader, ceilingWriter } from "../lib/sql.mjs";
import { bulkFill, fileSize, newStore, removeDir } from "../lib/stores.mjs";
import { TAIL_SQL } from "./tail.mjs";

/** Messages per generated session (a long agent session; the tail reads its last 200). */
export const PER_SESSION = 500;
const TAIL = 200;
export const WORKLOAD = "16. scaling";

const label = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/**
 * Grow the store at `path` from `have` to `want` messages in new sessions
 * `s-<firstSession>`…; returns { seconds, sessions } (sessions added).
 */
function grow(path, { have, want, firstSession, step, log }) {
  const t0 = performance.now();
  let shown = 0;
  const total = want - have;
  const sessions = Math.max(1, Math.round(total / PER_SESSION));
  bulkFill(path, {
    total,
    sessions,
    firstSession,
    seed: 1600 + step,
    onProgress: (done) => {
      if (done - shown >= 500_000) {
        shown = done;
        log(`  16. growing: ${(have + done).toLocaleString("en-US")} messages`);
      }
    },
  });
  return { seconds: (performance.now() - t0) / 1000, sessions };
}

async function measureAt({ home, path, messages, sessions, sizes, rounds, log }) {
  const pickSessions = (seed, n) => {
    const rand = prng(seed);
    return Array.from({ length: n }, () => `s-${Math.floor(rand() * sessions)}`);
  };
  const list = mixedQueries(1666, sizes.scalingQueries);
  const fts = list.map((q) => ftsQuery(q.text));
  const tailIds = pickSessions(16, sizes.scalingTails);
  const appendIds = pickSessions(61, sizes.scalingAppends);
  const toAppend = messageList(1616, sizes.scalingAppends);
  const hearthStore = () => openStore({ home, config: { durability: { synchronous: "full" } } });
  let hits = 0;
  let tailed = 0;
  const search = await runRounds({
    rounds,
    iterations: list.length,
    warmup: sizes.warmup ? 5 : 0,
    variants: [
      {
        name: "hearth",
        async: true,
        setup: hearthStore,
        fn: async (store, i) => {
          hits += (await store.search(list[i].text)).length;
        },
        teardown: (store) => store.close(),
      },
      {
        name: "ceiling",
        async: false,
        setup: () => ceilingReader(path),
        fn: (r, i) => r.search(fts[i]),
        teardown: (r) => r.close(),
      },
    ],
  });
  if (hits === 0) throw new Error("16. search found nothing: the store or the queries are wrong");
  const tail = await runRounds({
    rounds,
    iterations: tailIds.length,
    warmup: sizes.warmup ? 20 : 0,
    variants: [
      {
        name: "hearth",
        async: true,
        setup: hearthStore,
        fn: async (store, i) => {
          tailed = (await store.messages.tail(tailIds[i], TAIL)).length;
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
        fn: (c, i) => c.stmt.all(tailIds[i], TAIL).reverse(),
        teardown: (c) => c.db.close(),
      },
    ],
  });
  if (tailed !== TAIL) throw new Error(`16. tail returned ${tailed} messages, expected ${TAIL}`);
  // Appends last: they grow the store (2 × rounds × scalingAppends messages per size).
  // The WAL is read while hearth's writer is still open (the last close removes it).
  let wal = 0;
  const append = await runRounds({
    rounds,
    iterations: toAppend.length,
    warmup: 0,
    variants: [
      {
        name: "hearth",
        async: true,
        setup: hearthStore,
        fn: (store, i) => store.messages.append(appendIds[i], toAppend[i]),
        teardown: (store) => {
          wal = Math.max(wal, fileSize(`${path}-wal`));
          return store.close();
        },
      },
      {
        name: "ceiling",
        async: false,
        setup: () => ceilingWriter(path, "full"),
        fn: (w, i) => w.append(appendIds[i], toAppend[i]),
        teardown: (w) => w.close(),
      },
    ],
  });
  const db = fileSize(path);
  const workload = `${WORKLOAD} (${label(messages)} messages)`;
  const pick = (res, key) => ({
    hearth: res.hearth.map((r) => r[key]),
    ceiling: res.ceiling.map((r) => r[key]),
  });
  const rate = (res) => ({
    hearth: res.hearth.map((r) => 1000 / r.meanMs),
    ceiling: res.ceiling.map((r) => 1000 / r.meanMs),
  });
  const common = { workload };
  log(
    `  16. at ${label(messages)}: search p50 ${search.hearth.map((r) => r.p50.toFixed(2)).join("/")} ms, p99 ${search.hearth.map((r) => r.p99.toFixed(1)).join("/")} ms; tail p50 ${tail.hearth.map((r) => r.p50.toFixed(3)).join("/")} ms; append ${rate(
      append,
    )
      .hearth.map((v) => v.toFixed(0))
      .join("/")} msg/s; ${((db + wal) / 2 ** 20).toFixed(1)} MiB`,
  );
  const mib = (bytes) => [bytes / 2 ** 20];
  return [
    row({
      ...common,
      metric: "append (1 message/txn, WAL+FULL) messages/s",
      unit: "msg/s",
      better: "higher",
      ...rate(append),
    }),
    row({
      ...common,
      metric: "tail of 200, p50",
      unit: "ms",
      better: "lower",
      ...pick(tail, "p50"),
    }),
    row({
      ...common,
      metric: "search p50 (1/3 common, 2/3 rare words)",
      unit: "ms",
      better: "lower",
      ...pick(search, "p50"),
    }),
    row({
      ...common,
      metric: "search p99 (1/3 common, 2/3 rare words)",
      unit: "ms",
      better: "lower",
      ...pick(search, "p99"),
    }),
    row({
      ...common,
      metric: "file size, database",
      unit: "MiB",
      better: "lower",
      hearth: mib(db),
    }),
    row({
      ...common,
      metric: "file size, WAL (largest after an append round)",
      unit: "MiB",
      better: "lower",
      hearth: mib(wal),
    }),
    // Named "cost, …": the charts pick their curves by the metric's first words.
    ...costRows({ workload, what: "cost, append", res: append }),
    ...costRows({ workload, what: "cost, tail of 200", res: tail }),
    ...costRows({ workload, what: "cost, search", res: search }),
  ].map((r) => ({ ...r, scaling: { messages } }));
}

export async function scalingWorkload({ sizes, rounds, log }) {
  const points = sizes.scalingSizes;
  log(
    `16. scaling: one store grown through ${points.map(label).join(", ")} messages; ${rounds} rounds at each size`,
  );
  const { home, path } = await newStore("scaling", "full");
  const rows = [];
  const fill = [];
  let have = 0;
  let sessions = 0;
  try {
    for (const [step, want] of points.entries()) {
      const grown = grow(path, { have, want, firstSession: sessions, step, log });
      sessions += grown.sessions;
      fill.push({ from: have, to: want, seconds: grown.seconds });
      log(`  16. grew ${label(have)} → ${label(want)} in ${grown.seconds.toFixed(1)} s`);
      have = want;
      rows.push(...(await measureAt({ home, path, messages: want, sessions, sizes, rounds, log })));
      // The appends added messages to existing sessions; the next fill starts after them.
      have += 2 * rounds * sizes.scalingAppends;
    }
  } finally {
    removeDir(home);
  }
  sizes.scalingFill = fill;
  return rows;
}

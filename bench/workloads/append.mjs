// Workloads 1 and 2: single-message appends (one transaction each) and
// 100-message batches, across 100 sessions, at WAL+FULL and WAL+NORMAL.
import { openStore } from "../../dist/index.js";
import { messageList } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { row } from "../lib/rows.mjs";
import { ceilingWriter, naive } from "../lib/sql.mjs";
import { addSessions, newStore, removeDir } from "../lib/stores.mjs";

const SESSIONS = 100;
const BATCH = 100;

/** A fresh hearth-created store with 100 empty sessions, for one variant and one phase. */
async function freshStore(synchronous) {
  const { home, path } = await newStore("append", synchronous);
  const ids = addSessions(path, SESSIONS);
  return { home, path, ids };
}

function variants(synchronous, batch) {
  const close = async (ctx) => {
    await ctx.close();
    removeDir(ctx.home);
  };
  const rawVariant = (name, make) => ({
    name,
    async: false,
    setup: async () => {
      const s = await freshStore(synchronous);
      const w = make(s.path, synchronous);
      return { ...s, w, close: async () => w.close() };
    },
    fn: batch
      ? (ctx, i) => ctx.w.appendBatch(ctx.ids[i % SESSIONS], ctx.batches[i])
      : (ctx, i) => ctx.w.append(ctx.ids[i % SESSIONS], ctx.list[i]),
    teardown: close,
  });
  return [
    {
      name: "hearth",
      async: true,
      setup: async () => {
        const s = await freshStore(synchronous);
        const store = await openStore({ home: s.home, config: { durability: { synchronous } } });
        return { ...s, store, close: () => store.close() };
      },
      fn: batch
        ? (ctx, i) => ctx.store.messages.appendBatch(ctx.ids[i % SESSIONS], ctx.batches[i])
        : (ctx, i) => ctx.store.messages.append(ctx.ids[i % SESSIONS], ctx.list[i]),
      teardown: close,
    },
    rawVariant("ceiling", ceilingWriter),
    rawVariant("naive", naive),
  ];
}

/** Run one append workload at one synchronous level; returns table rows. */
async function measure({ synchronous, batch, perRound, naivePerRound, rounds, warm, log }) {
  const perCall = batch ? BATCH : 1;
  const iterations = perRound / perCall;
  const list = messageList(1000 + (batch ? 1 : 0), perRound);
  const batches = Array.from({ length: iterations }, (_, i) =>
    list.slice(i * perCall, (i + 1) * perCall),
  );
  const vs = variants(synchronous, batch).map((v) => ({
    ...v,
    ...(v.name === "naive" ? { iterations: naivePerRound / perCall } : {}),
    setup: async (round, mode) => ({ ...(await v.setup(round, mode)), list, batches }),
  }));
  const warmup = warm ? Math.max(5, Math.min(100, Math.floor(iterations / 20))) : 0;
  const res = await runRounds({ rounds, iterations, warmup, variants: vs, log });
  const rate = (name) => res[name].map((r) => (perCall * 1000) / r.meanMs);
  const pick = (name, key) => res[name].map((r) => r[key]);
  const workload = batch ? "2. batch append (100/call)" : "1. append (1 message/txn)";
  const level = `WAL+${synchronous.toUpperCase()}`;
  const rows = [
    row({
      workload,
      metric: `${level} messages/s`,
      unit: "msg/s",
      better: "higher",
      hearth: rate("hearth"),
      ceiling: rate("ceiling"),
      naive: rate("naive"),
      ...(batch
        ? {}
        : {
            target: {
              text: ">= 0.9× ceiling",
              kind: "ceiling",
              op: ">=",
              value: 0.9,
              basis: "median",
            },
          }),
    }),
  ];
  // CPU per message (every thread of this process: the checkpoint thread's
  // and V8's too), the issue-44 measure of the gap that throughput on a
  // shared machine hides; the ceiling checkpoints and merges in its commits.
  const cpuUs = (name) => res[name].map((r) => (r.cpuMs * 1000) / perCall);
  rows.push(
    row({
      workload,
      metric: `${level} CPU per message (process.cpuUsage, every thread)`,
      unit: "µs",
      better: "lower",
      hearth: cpuUs("hearth"),
      ceiling: cpuUs("ceiling"),
      naive: cpuUs("naive"),
      ...(batch || synchronous !== "full"
        ? {}
        : {
            target: {
              text: "<= 1.1× ceiling",
              kind: "ceiling",
              op: "<=",
              value: 1.1,
              basis: "median",
            },
          }),
    }),
  );
  // Counted (/proc/self/io): the read and write system calls per message
  // (WAL frames, checkpoint copies, the wal-index and page reads).
  rows.push(
    row({
      workload,
      metric: `${level} read + write system calls per message (/proc/self/io)`,
      unit: "calls",
      better: "lower",
      hearth: res.hearth.map((r) => r.io.syscalls / perCall),
      ceiling: res.ceiling.map((r) => r.io.syscalls / perCall),
      naive: res.naive.map((r) => r.io.syscalls / perCall),
    }),
  );
  for (const key of ["p50", "p99"]) {
    rows.push(
      row({
        workload,
        metric: `${level} ${key} per call`,
        unit: "ms",
        better: "lower",
        hearth: pick("hearth", key),
        ceiling: pick("ceiling", key),
        naive: pick("naive", key),
      }),
    );
  }
  return rows;
}

export async function appendWorkloads({ sizes, rounds, log }) {
  const rows = [];
  // Whole messages: with a round count that does not divide the total (--rounds 3), a fractional count indexed past the list.
  const perRound = Math.round(sizes.appendTotal / rounds);
  for (const synchronous of ["full", "normal"]) {
    log(`1. append, WAL+${synchronous}: ${perRound} messages per round × ${rounds} rounds`);
    rows.push(
      ...(await measure({
        synchronous,
        batch: false,
        perRound,
        naivePerRound: sizes.naiveAppends,
        rounds,
        warm: sizes.warmup,
        log,
      })),
    );
  }
  for (const synchronous of ["full", "normal"]) {
    const n = sizes.batchTotal;
    log(`2. batch append, WAL+${synchronous}: ${n} messages in 100s per round × ${rounds} rounds`);
    rows.push(
      ...(await measure({
        synchronous,
        batch: true,
        perRound: n,
        naivePerRound: n,
        rounds,
        warm: sizes.warmup,
        log,
      })),
    );
  }
  return rows;
}

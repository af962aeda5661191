// One process of the mixed multi-process workload (4). argv[2] is JSON:
// { variant: "hearth" | "ceiling" | "naive", role: "writer" | "reader",
//   home, path, ids, seed, synchronous }.
// On {"op":"run","ms":N} it works for N ms and answers with its figures:
// writers append one message per transaction to random sessions; readers
// cycle through the last 50 messages of a random session, a list of 20
// sessions and one search. Between operations it yields to the event loop
// (setImmediate), as a process serving other work would.
import { openStore } from "../../dist/index.js";
import { ftsQuery, messageList, prng, queries } from "../lib/corpus.mjs";
import { costMeter } from "../lib/io-counters.mjs";
import { lagMonitor } from "../lib/loop-lag.mjs";
import { serve } from "../lib/procs.mjs";
import { ceilingReader, ceilingWriter, naive } from "../lib/sql.mjs";

const spec = JSON.parse(process.argv[2]);
const { variant, role, home, path, ids, seed, synchronous } = spec;
const config = { durability: { synchronous } };

let store;
let raw;
if (variant === "hearth") {
  store = await openStore({ home, role, config });
} else if (variant === "ceiling") {
  raw = role === "writer" ? ceilingWriter(path, synchronous) : ceilingReader(path);
} else {
  raw = naive(path, synchronous);
}

const rand = prng(seed);
const pickSession = () => ids[Math.floor(rand() * ids.length)];
const list = role === "writer" ? messageList(seed, 5_000) : [];
const searches = queries(seed, 1000);

const ops = {
  async append(i) {
    const m = list[i % list.length];
    if (store) await store.messages.append(pickSession(), m);
    else raw.append(pickSession(), m);
  },
  async read(i) {
    const kind = i % 3;
    if (kind === 0) {
      // No tail query in the API: load the live transcript and keep the last 50.
      const rows = store ? await store.messages.load(pickSession()) : raw.load(pickSession());
      return rows.slice(-50).length;
    }
    if (kind === 1) {
      return store ? (await store.sessions.list({ limit: 20 })).items.length : raw.list(20).length;
    }
    const text = searches[i % searches.length];
    return store ? (await store.search(text)).length : raw.search(ftsQuery(text)).length;
  },
};

serve({
  async run({ ms }) {
    const op = role === "writer" ? ops.append : ops.read;
    const latencies = [];
    let errors = 0;
    let lastError;
    const lag = lagMonitor();
    const cost = costMeter();
    const end = performance.now() + ms;
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      try {
        await op(i);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        lastError = `${err.code ?? ""} ${err.message}`;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const { cpuMs, syscalls } = cost.stop();
    const samples = lag.stop();
    return {
      ops: latencies.length,
      // This process's CPU (every thread) and system calls over the run (issue 44).
      cpuMs,
      syscalls,
      latencies: latencies.map((v) => Math.round(v * 1000) / 1000),
      errors,
      lastError,
      maxLateMs: Math.max(0, ...samples.map((s) => s.lateMs)),
    };
  },
  async close() {
    await store?.close();
    raw?.close();
  },
});

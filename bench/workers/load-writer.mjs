// The writer process of the maintenance workload (7). argv[2] is JSON:
// { variant: "hearth" | "ceiling" | "naive", home, path, ids, seed, synchronous }.
// {"op":"start"} starts appending (one message per transaction, random
// sessions, yielding between appends) while a 10 ms interval records
// event-loop lateness. {"op":"backup","target"} (naive only) runs the backup
// on this process's own connection between two appends. {"op":"stop",
// "from","to"} stops and reports the figures inside [from, to] (epoch ms).
import { openStore } from "../../dist/index.js";
import { messageList, prng } from "../lib/corpus.mjs";
import { lagMonitor, lateSamples } from "../lib/loop-lag.mjs";
import { serve } from "../lib/procs.mjs";
import { ceilingWriter, rawBackup } from "../lib/sql.mjs";
import { quantile } from "../lib/stats.mjs";

const { variant, home, path, ids, seed, synchronous } = JSON.parse(process.argv[2]);
const store =
  variant === "hearth" ? await openStore({ home, config: { durability: { synchronous } } }) : null;
const raw = store ? null : ceilingWriter(path, synchronous);
const rand = prng(seed);
const list = messageList(seed, 50_000);
const now = () => performance.timeOrigin + performance.now();

const appends = []; // [start epoch ms, duration ms]: appends overlapping the window count
let running = false;
let loop;
let lag;
let pendingBackup;

async function run() {
  for (let i = 0; running; i++) {
    // Timed from the moment the loop wants to append: a naive backup run on
    // this connection first delays that append by the whole backup.
    const t0 = performance.now();
    if (pendingBackup) {
      const { target, resolve } = pendingBackup;
      pendingBackup = undefined;
      const from = now();
      rawBackup(raw.db, target);
      resolve({ from, to: now() });
    }
    const sessionId = ids[Math.floor(rand() * ids.length)];
    const m = list[i % list.length];
    if (store) await store.messages.append(sessionId, m);
    else raw.append(sessionId, m);
    appends.push([performance.timeOrigin + t0, performance.now() - t0]);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

serve({
  async start() {
    running = true;
    lag = lagMonitor();
    loop = run();
    return true;
  },
  backup({ target }) {
    return new Promise((resolve) => {
      pendingBackup = { target, resolve };
    });
  },
  async stop({ from, to }) {
    running = false;
    await loop;
    const samples = lag.stop();
    const inside = appends.filter(([at, ms]) => at <= to && at + ms >= from).map(([, ms]) => ms);
    // A sample at `at`, late by L, stands for the gap (at - 10 - L, at].
    const inWindow = samples.filter((s) => s.at >= from && s.at - 10 - s.lateMs <= to);
    const stalls = inWindow.map((s) => s.lateMs);
    const before = appends.filter(([at]) => at < from).map(([, ms]) => ms);
    return {
      commits: inside.length,
      commitsPerSec: appends.filter(([at]) => at >= from && at <= to).length / ((to - from) / 1000),
      p99: quantile(inside, 0.99),
      maxAppendMs: Math.max(0, ...inside),
      quietP99: quantile(before, 0.99),
      maxStallMs: Math.max(0, ...stalls),
      // For the stall net of the machine's CPU freezes (bench/lib/loop-lag.mjs).
      lateSamples: lateSamples(inWindow),
    };
  },
  async close() {
    await store?.close();
    raw?.close();
  },
});

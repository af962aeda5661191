// Workload 10: a gateway serving turns while another client reads a
// 100,000-message transcript (GET /v1/sessions/:id, over and over, in a
// process of its own). Three gateways per round, interleaved, each on a copy
// of the same store: "quiet" (no reader: the baseline), "threads" (the
// default, store.readerThreads 2: the transcript is read and serialized on a
// reader thread) and "loop" (readerThreads 0: as before reader threads, all
// on the gateway's event loop). Metric: p99 turn latency of 8 clients.
import { join } from "node:path";
import { openStore } from "../../dist/index.js";
import { startServer } from "../lib/gateway-servers.mjs";
import { startChild } from "../lib/procs.mjs";
import { row } from "../lib/rows.mjs";
import { rotate } from "../lib/stats.mjs";
import { removeDir, tempDir } from "../lib/stores.mjs";
import { measureWindow, TURNS_PER_CHAT } from "./gateway.mjs";

const VARIANTS = [
  { key: "quiet", readerThreads: 2, reader: false },
  { key: "threads", readerThreads: 2, reader: true },
  { key: "loop", readerThreads: 0, reader: true },
];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function buildTranscript(messages) {
  const home = tempDir("readers");
  const store = await openStore({ home });
  const session = await store.sessions.create({ source: "bench", title: "long transcript" });
  for (let i = 0; i < messages; i += 1000) {
    await store.messages.appendBatch(
      session.id,
      Array.from({ length: Math.min(1000, messages - i) }, (_, j) => ({
        role: j % 2 ? "assistant" : "user",
        content: `message ${i + j}: the harbour lights were counted again at dusk, ${j % 97} of them`,
      })),
    );
  }
  await store.close();
  return { home, database: join(home, "state.db"), sessionId: session.id };
}

export async function readersWorkload({ sizes, rounds, log }) {
  const full = sizes.readerMessages >= 100_000;
  const built = await buildTranscript(sizes.readerMessages);
  log(
    `10. gateway p99 turn latency while another client reads a ${sizes.readerMessages.toLocaleString("en-US")}-message transcript × ${rounds} rounds`,
  );
  const clients = [0, 1].map((p) =>
    startChild("gateway-client.mjs", { seed: 1000 + p, turnsPerChat: TURNS_PER_CHAT }),
  );
  const reader = startChild("transcript-reader.mjs", {});
  const p99 = { quiet: [], threads: [], loop: [] };
  const busy = { quiet: [], threads: [], loop: [] };
  const reads = { threads: [], loop: [] };
  try {
    await Promise.all([...clients, reader].map((c) => c.line((l) => l.ready === true)));
    for (let round = 0; round < rounds; round++) {
      for (const v of rotate(VARIANTS, round)) {
        const server = await startServer({
          synchronous: "full",
          groupCommit: true,
          database: built.database,
          config: { store: { readerThreads: v.readerThreads } },
        });
        try {
          if (v.reader) {
            reader.send({
              op: "start",
              seq: `${round}-${v.key}`,
              address: server.address,
              sessionId: built.sessionId,
            });
            await reader.line((l) => l.op === "start" && l.seq === `${round}-${v.key}`);
            await sleep(200);
          }
          const w = await measureWindow(clients, {
            ...server,
            n: 8,
            tag: `r${round}${v.key}`,
            warmMs: sizes.gatewayWarmMs,
            ms: sizes.readerMs,
          });
          if (w.errors > 0)
            throw new Error(`gateway turns failed (${v.key}, round ${round + 1}): ${w.lastError}`);
          p99[v.key].push(w.p99);
          busy[v.key].push(100 * w.machineBusy);
          if (v.reader) {
            reader.send({ op: "stop", seq: `s${round}-${v.key}` });
            const got = await reader.line((l) => l.op === "stop" && l.seq === `s${round}-${v.key}`);
            reads[v.key].push(got.result.reads);
          }
        } finally {
          await server.stop();
        }
      }
      log(
        `  10 round ${round + 1}/${rounds}: p99 ${p99.quiet.at(-1).toFixed(1)} ms quiet, ${p99.threads.at(-1).toFixed(1)} ms with the reader (reader threads, ${reads.threads.at(-1)} transcripts read), ${p99.loop.at(-1).toFixed(1)} ms (on the loop, ${reads.loop.at(-1)} read)`,
      );
    }
  } finally {
    await Promise.all([...clients, reader].map((c) => c.stop()));
    removeDir(built.home);
  }
  const workload = `10. gateway beside a whole-transcript reader (${sizes.readerMessages.toLocaleString("en-US")} messages)`;
  const baselines = {
    ceiling: "the same gateway, no reader",
    naive:
      "the same gateway with store.readerThreads 0 (the transcript read and serialized on its event loop)",
  };
  return [
    row({
      workload,
      metric: `gateway p99 turn latency (8 clients, WAL+FULL) while another client reads a ${sizes.readerMessages.toLocaleString("en-US")}-message transcript again and again`,
      unit: "ms",
      better: "lower",
      hearth: p99.threads,
      ceiling: p99.quiet,
      naive: p99.loop,
      baselines,
      target: {
        text: "<= 1.5× without the reader",
        kind: "ceiling",
        op: "<=",
        value: 1.5,
        basis: "median",
        applies: full,
      },
    }),
    // What the reader leaves of the machine: the turns' latency rises with
    // it once both cores are taken, whatever priority the reader runs at.
    row({
      workload,
      metric: "machine CPU busy during the window (all processes, /proc/stat)",
      unit: "%",
      better: "lower",
      hearth: busy.threads,
      ceiling: busy.quiet,
      naive: busy.loop,
      baselines,
    }),
  ];
}

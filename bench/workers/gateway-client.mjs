// HTTP clients of the gateway workloads (3 and 8), in a process of their
// own so their CPU never runs on the gateway's event loop. argv[2] is JSON:
// { seed, turnsPerChat }. Each client is one loop of POST /v1/messages,
// back to back, on its own keep-alive connection (node:http, the lightest
// client in Node), in its own chat: it moves to a fresh chat of its own
// every `turnsPerChat` turns, so a transcript (the gateway loads it whole
// on every turn) stays short whatever the client count and throughput.
//
// {"op":"prepare", address, clients, tag}: each client sends its first
//   message (creating its first session); not timed.
// {"op":"run", address, clients, tag, at, ms}: the loops run from now
//   (warm-up) until `at` + ms (Date.now() time); a turn counts when its
//   answer arrives inside [at, at + ms], and its latency is kept when it
//   was also sent inside the window. Answers with { turns, latencies,
//   errors, lastError }.
import { CHAT_SHAPES, messageList } from "../lib/corpus.mjs";
import { closeAgent, post } from "../lib/http-post.mjs";
import { serve } from "../lib/procs.mjs";

const { seed, turnsPerChat } = JSON.parse(process.argv[2]);
const texts = messageList(seed, 1000, CHAT_SHAPES).map((m) => m.content);

/** Per client (by number): turns sent so far, across runs of one tag. */
const sent = new Map();

async function turn(address, tag, client) {
  const key = `${tag}:${client}`;
  const n = sent.get(key) ?? 0;
  sent.set(key, n + 1);
  const chat = `${tag}-c${client}-${Math.floor(n / turnsPerChat)}`;
  const body = JSON.stringify({
    platform: "bench",
    chat,
    content: texts[(client * 31 + n) % texts.length],
    clientId: `${chat}-${n}`,
  });
  const res = await post(address, "/v1/messages", body);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
}

serve({
  async prepare({ address, clients, tag }) {
    await Promise.all(clients.map((c) => turn(address, tag, c)));
    return clients.length;
  },
  async run({ address, clients, tag, at, ms }) {
    // Date.now() of the parent → this process's performance.now().
    const start = performance.now() + (at - Date.now());
    const end = start + ms;
    const latencies = [];
    let turns = 0;
    let errors = 0;
    let lastError;
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < end) {
          const t0 = performance.now();
          try {
            await turn(address, tag, c);
          } catch (err) {
            errors++;
            lastError = err.message;
            continue;
          }
          const t1 = performance.now();
          if (t1 >= start && t1 <= end) {
            turns++;
            if (t0 >= start) latencies.push(Math.round((t1 - t0) * 1000) / 1000);
          }
        }
      }),
    );
    return { turns, latencies, errors, lastError };
  },
  async close() {
    closeAgent();
  },
});

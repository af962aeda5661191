// The HTTP clients of workload 14 (gateway memory), in a process of their
// own. argv[2] is JSON: { seed }.
//
// {"op":"block", address, block, clients, turnsPerSession}: `clients`
//   concurrent clients, client k on chat `mem-<block * clients + k>` (a new
//   session the first time), each sending `turnsPerSession` turns back to
//   back on its own keep-alive connection. Answers with { turns, errors,
//   lastError } once every client is done.
import { CHAT_SHAPES, messageList } from "../lib/corpus.mjs";
import { closeAgent, post } from "../lib/http-post.mjs";
import { serve } from "../lib/procs.mjs";

const { seed } = JSON.parse(process.argv[2]);
const texts = messageList(seed, 1000, CHAT_SHAPES).map((m) => m.content);

serve({
  async block({ address, block, clients, turnsPerSession }) {
    let turns = 0;
    let errors = 0;
    let lastError;
    await Promise.all(
      Array.from({ length: clients }, async (_, k) => {
        const chat = `mem-${block * clients + k}`;
        for (let n = 0; n < turnsPerSession; n++) {
          const body = JSON.stringify({
            platform: "bench",
            chat,
            content: texts[(block * 131 + k * 31 + n) % texts.length],
            clientId: `${chat}-${n}`,
          });
          try {
            const res = await post(address, "/v1/messages", body);
            if (res.status !== 200)
              throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
            turns++;
          } catch (err) {
            errors++;
            lastError = err.message;
          }
        }
      }),
    );
    return { turns, errors, lastError };
  },
  async close() {
    closeAgent();
  },
});

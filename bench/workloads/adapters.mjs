// Workload 11: the OpenAI Agents SDK adapter. session.getItems(limit) on
// hearth's HearthSession vs the same call on the SDK's own MemorySession
// (items in a JS array: the fastest store the SDK ships), side by side on
// the same items: a 10,000-item conversation of agent-like items (user
// messages, tool calls, tool results, answers; text from the corpus).
// The SDK's debug serialization of items is switched off for MemorySession
// (OPENAI_AGENTS_DONT_LOG_*), so the baseline is its cheapest path.
import { MemorySession } from "@openai/agents";
import { HearthSession } from "../../dist/adapters/openai-agents/index.js";
import { openStore } from "../../dist/index.js";
import { messageList } from "../lib/corpus.mjs";
import { runRounds } from "../lib/inproc.mjs";
import { costRows, row } from "../lib/rows.mjs";
import { newStore, removeDir } from "../lib/stores.mjs";
import { langgraphWorkload } from "./langgraph.mjs";

const TOTAL = 10_000;
const LIMITS = [20, 200];

/** Agent items as the SDK produces them, from the corpus's role mix. */
function agentItems(count) {
  return messageList(9, count).map((m, i) => {
    if (m.role === "user") return { type: "message", role: "user", content: m.content };
    if (m.role === "tool") {
      return {
        type: "function_call_result",
        name: "search",
        callId: `call-${i}`,
        status: "completed",
        output: { type: "text", text: m.content },
      };
    }
    return i % 3 === 0
      ? {
          type: "function_call",
          callId: `call-${i + 1}`,
          name: "search",
          arguments: JSON.stringify({ query: m.content.slice(0, 40) }),
          status: "completed",
        }
      : {
          type: "message",
          id: `msg-${i}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: m.content }],
        };
  });
}

export async function adaptersWorkload({ sizes, rounds, log }) {
  process.env.OPENAI_AGENTS_DONT_LOG_MODEL_DATA = "1";
  process.env.OPENAI_AGENTS_DONT_LOG_TOOL_DATA = "1";
  const items = agentItems(TOTAL);
  const { home } = await newStore("adapters", "full");
  const rows = [];
  try {
    const filler = await HearthSession.open({ home }, { sessionId: "bench" });
    for (let i = 0; i < items.length; i += 1_000) await filler.addItems(items.slice(i, i + 1_000));
    await filler.close();
    for (const limit of LIMITS) {
      log(`11. adapters: getItems(${limit}) of ${TOTAL} items × ${rounds} rounds`);
      let seen = { hearth: 0, memory: 0 };
      const res = await runRounds({
        rounds,
        iterations: sizes.adapterCalls,
        warmup: sizes.warmup ? 50 : 0,
        log,
        variants: [
          {
            name: "hearth",
            async: true,
            setup: async () => new HearthSession(await openStore({ home }), { sessionId: "bench" }),
            fn: async (s) => {
              seen.hearth = (await s.getItems(limit)).length;
            },
            teardown: (s) => s.store.close(),
          },
          {
            name: "ceiling",
            async: true,
            setup: () => new MemorySession({ sessionId: "bench", initialItems: items }),
            fn: async (s) => {
              seen.memory = (await s.getItems(limit)).length;
            },
          },
        ],
      });
      if (seen.hearth !== limit || seen.memory !== limit) {
        throw new Error(`getItems(${limit}) returned ${JSON.stringify(seen)}`);
      }
      seen = { hearth: 0, memory: 0 };
      const perSecond = (r) => r.map((x) => 1000 / x.meanMs);
      rows.push(
        row({
          workload: "11. adapters (OpenAI Agents Session)",
          metric: `getItems(${limit}) of ${TOTAL.toLocaleString("en-US")} items: calls per second`,
          unit: "calls/s",
          better: "higher",
          hearth: perSecond(res.hearth),
          ceiling: perSecond(res.ceiling),
          baselines: { ceiling: "the SDK's MemorySession" },
          target: {
            text: "≥ 0.9× MemorySession",
            kind: "ceiling",
            op: ">=",
            value: 0.9,
            basis: "median",
          },
        }),
        ...costRows({
          workload: "11. adapters (OpenAI Agents Session)",
          what: `getItems(${limit}) of ${TOTAL.toLocaleString("en-US")} items`,
          res,
          baselines: { ceiling: "the SDK's MemorySession" },
        }),
      );
    }
  } finally {
    removeDir(home);
  }
  rows.push(...(await langgraphWorkload({ sizes, rounds, log })));
  return rows;
}

import { mkdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { estimateTokens, SUMMARY_PROMPT } from "../../../src/turn/compaction.js";
import {
  answerStream,
  closeFakes,
  type FakeRequest,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

afterEach(closeFakes);

const BUDGET = 20_000;
const MESSAGES = 5_001;

/** A home whose chat web/long has 5,001 messages, each with its own marker. */
async function longChat() {
  const home = tempHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const store = await openStore({ home });
  const session = await store.sessions.create({ source: "web", chatKey: "long" });
  for (let start = 0; start < MESSAGES; start += 1_000) {
    const batch = [];
    for (let i = start; i < Math.min(MESSAGES, start + 1_000); i++)
      batch.push({
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: `marker-${i} ${"words of a long conversation ".repeat(3)}`,
      });
    await store.messages.appendBatch(session.id, batch);
  }
  await store.close();
  return { home, sessionId: session.id };
}

/** The text of a summary request, or undefined for a turn's request. */
const summaryText = (req: FakeRequest) =>
  req.body.messages?.find((m) => m.content?.startsWith?.(SUMMARY_PROMPT))?.content;

async function gatewayOn(home: string, failAt?: number) {
  let summaries = 0;
  const fake = await startFakeOpenAi((req, res) => {
    if (summaryText(req) === undefined) return answerStream(res, ["hello again"]);
    summaries++;
    if (summaries === failAt) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":"overloaded"}');
      return;
    }
    answerStream(res, [`summary ${summaries}`]);
  });
  writeConfig(home, {
    gateway: {
      responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m" },
      compactAfterMessages: 5_000,
      compactionWindowTokens: BUDGET,
    },
  });
  const gw = await startGateway(home);
  const res = await gw.post({ platform: "web", chat: "long", content: "are you there?" });
  return { fake, res, requests: fake.requests.map(summaryText).filter((t) => t !== undefined) };
}

describe("compaction in bounded windows (gateway.compactionWindowTokens)", () => {
  it("a 5,001-message session is summarized in several requests, each under the budget, every message in one of them", async () => {
    const { home, sessionId } = await longChat();
    const { res, requests } = await gatewayOn(home);
    expect(res.status).toBe(200);
    expect(res.body.reply.content).toBe("hello again");
    expect(requests.length).toBeGreaterThan(2);
    for (const text of requests) expect(estimateTokens(text!)).toBeLessThanOrEqual(BUDGET);
    // Each window after the first carries the summary before it.
    expect(requests[1]).toContain("summary 1");
    const all = requests.join("\n");
    for (const i of [0, 1, 2_500, 4_999, 5_000]) expect(all).toContain(`marker-${i} `);
    expect(all.match(/marker-\d+ /g)).toHaveLength(MESSAGES);
    const after = await withStore(home, async (s) => ({
      live: (await s.messages.load(sessionId)).map((m) => [m.role, m.content]),
      all: (await s.messages.load(sessionId, { includeHistory: true })).length,
    }));
    expect(after.live).toEqual([
      ["system", `summary ${requests.length}`],
      ["user", "are you there?"],
      ["assistant", "hello again"],
    ]);
    expect(after.all).toBe(MESSAGES + 3);
  });

  it("a failed summary request commits nothing: the session keeps its transcript and the turn is answered", async () => {
    const { home, sessionId } = await longChat();
    const { res, requests } = await gatewayOn(home, 3);
    expect(res.status).toBe(200);
    expect(res.body.reply.content).toBe("hello again");
    expect(requests).toHaveLength(3);
    const live = await withStore(home, (s) => s.messages.load(sessionId));
    expect(live).toHaveLength(MESSAGES + 2);
    expect(live.some((m) => m.role === "system")).toBe(false);
    expect(live[0]!.content).toMatch(/^marker-0 /);
  });
});

/**
 * Token usage and cost (issue 47): an OpenAI-compatible endpoint's `usage`
 * (asked for with stream_options.include_usage when streaming) is stored on
 * the assistant message (tokens_in/tokens_out, metadata.model), and the
 * dashboard's GET /api/activity sums it per period with the cost from
 * dashboard.prices. A real gateway process, a fake endpoint on loopback and
 * a real dashboard process on one home.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { startDashboard } from "../../helpers/dashboard.js";
import {
  answerJson,
  answerStream,
  closeFakes,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

afterEach(closeFakes);

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

describe("token usage and cost", () => {
  it("stores the endpoint's usage on the reply and the activity API sums it with its cost", async () => {
    let n = 0;
    const fake = await startFakeOpenAi((req, res) => {
      n++;
      if (req.body.stream) {
        // The usage chunk comes last, with no choices, as OpenAI sends it.
        answerStream(res, ["stre", "amed"], {
          model: "gpt-x",
          choices: [],
          usage: usage(1000, 200),
        });
      } else {
        answerJson(res, "whole", { model: "gpt-x", usage: usage(3000, 400) });
      }
    });
    const home = tempHome();
    const responder = { kind: "openai", baseUrl: fake.baseUrl, model: "gpt-x", stream: true };
    writeConfig(home, {
      gateway: { responder },
      dashboard: {
        port: 0,
        prices: { "gpt-x": { inputPerMTok: 2, outputPerMTok: 10 } },
      },
    });
    let gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined } });
    const first = await gw.post({ platform: "web", chat: "a", content: "hi" });
    expect(first.status).toBe(200);
    expect(first.body.reply.content).toBe("streamed");
    // Streaming asks the endpoint for its usage.
    expect(fake.requests[0]!.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    await gw.kill("SIGTERM");
    writeConfig(home, {
      gateway: { responder: { ...responder, stream: false } },
      dashboard: { port: 0, prices: { "gpt-x": { inputPerMTok: 2, outputPerMTok: 10 } } },
    });
    gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined } });
    const second = await gw.post({ platform: "web", chat: "b", content: "hello" });
    expect(second.body.reply.content).toBe("whole");
    expect(n).toBe(2);

    const replies = await withStore(home, async (store) => {
      const out = [];
      for (const id of [first.body.session.id, second.body.session.id]) {
        const messages = await store.messages.load(id);
        out.push(messages.filter((m) => m.role === "assistant"));
      }
      return out.flat();
    });
    expect(replies.map((m) => [m.tokensIn, m.tokensOut, m.metadata])).toEqual([
      [1000, 200, { model: "gpt-x" }],
      [3000, 400, { model: "gpt-x" }],
    ]);

    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const activity = await browser.api("GET", "/api/activity?days=1&bucket=day");
    expect(activity.status).toBe(200);
    const buckets = activity.body.profiles[0].buckets as {
      tokensIn: number;
      tokensOut: number;
      cost: number | null;
      unpricedTokens: number;
    }[];
    const sum = (k: "tokensIn" | "tokensOut") => buckets.reduce((t, b) => t + b[k], 0);
    expect(sum("tokensIn")).toBe(4000);
    expect(sum("tokensOut")).toBe(600);
    // 4000 in at 2 per million + 600 out at 10 per million.
    const cost = buckets.reduce((t, b) => t + (b.cost ?? 0), 0);
    expect(cost).toBeCloseTo(0.008 + 0.006, 10);
    expect(buckets.every((b) => b.unpricedTokens === 0)).toBe(true);
  });

  it("leaves a model without a price unpriced and refuses a bad price table", async () => {
    const fake = await startFakeOpenAi((_req, res) =>
      answerJson(res, "ok", { model: "other", usage: usage(10, 5) }),
    );
    const home = tempHome();
    writeConfig(home, {
      gateway: {
        responder: { kind: "openai", baseUrl: fake.baseUrl, model: "other", stream: false },
      },
      dashboard: { port: 0, prices: { "gpt-x": { inputPerMTok: 2, outputPerMTok: 10 } } },
    });
    const gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined } });
    expect((await gw.post({ platform: "web", chat: "c", content: "x" })).status).toBe(200);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const activity = await browser.api("GET", "/api/activity?days=1");
    const buckets = activity.body.profiles[0].buckets;
    expect(
      buckets.reduce((t: number, b: { unpricedTokens: number }) => t + b.unpricedTokens, 0),
    ).toBe(15);
    expect(buckets.every((b: { cost: number | null }) => b.cost === null)).toBe(true);
    // A price that is not a number of at least 0, or a misspelled key, is refused with its path.
    for (const bad of [
      { inputPerMTok: -1, outputPerMTok: 1 },
      { inputPerMtok: 1, outputPerMTok: 1 },
    ]) {
      writeConfig(home, { dashboard: { prices: { "gpt-x": bad } } });
      expect(() => loadConfig({ home, env: {} })).toThrow(
        expect.objectContaining({ code: "HEARTH_CONFIG_INVALID" }),
      );
    }
  });
});

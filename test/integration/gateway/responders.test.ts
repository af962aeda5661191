import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  answerJson,
  answerStream,
  closeFakes,
  type FakeOpenAi,
  type FakeRequest,
  readSse,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

afterEach(closeFakes);

type Handler = (req: FakeRequest, res: ServerResponse) => void;

/** A fake endpoint and a gateway pointed at it; the environment never leaks a real key. */
async function setup(
  handler: Handler,
  responder: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
) {
  const fake: FakeOpenAi = await startFakeOpenAi(handler);
  const home = tempHome();
  writeConfig(home, {
    gateway: {
      responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: true, ...responder },
    },
  });
  const gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined, ...env } });
  return { fake, home, gw };
}

const streamMessage = (gwUrl: string, content: string, chat = "s") =>
  fetch(gwUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform: "web", chat, content, stream: true }),
  });

describe("OpenAI-compatible responder against a local fake", () => {
  it("takes a non-streaming reply and sends the model and the transcript", async () => {
    let n = 0;
    const { fake, gw } = await setup((_req, res) => answerJson(res, `answer ${++n}`), {
      stream: false,
    });
    const first = await gw.post({ platform: "web", chat: "c", content: "hi" });
    expect(first.status).toBe(200);
    expect(first.body.reply).toMatchObject({ role: "assistant", content: "answer 1" });
    const second = await gw.post({ platform: "web", chat: "c", content: "and then?" });
    expect(second.body.reply.content).toBe("answer 2");

    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]!.body).toEqual({
      model: "m",
      stream: false,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(fake.requests[1]!.body.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "answer 1" },
      { role: "user", content: "and then?" },
    ]);
    // No key in the environment: no Authorization header at all.
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
    const stored = await gw.get(`/v1/sessions/${second.body.session.id}`);
    expect(stored.body.messages.map((m: { content: string }) => m.content)).toEqual([
      "hi",
      "answer 1",
      "and then?",
      "answer 2",
    ]);
  });

  it("sends the key from OPENAI_API_KEY, or from the variable apiKeyEnv names", async () => {
    const byDefault = await setup(
      (_r, res) => answerJson(res, "ok"),
      {},
      { OPENAI_API_KEY: "sk-1" },
    );
    expect((await byDefault.gw.post({ platform: "p", chat: "c", content: "x" })).status).toBe(200);
    expect(byDefault.fake.requests[0]!.headers.authorization).toBe("Bearer sk-1");

    const named = await setup(
      (_r, res) => answerJson(res, "ok"),
      { apiKeyEnv: "MY_LLM_KEY" },
      { OPENAI_API_KEY: "sk-wrong", MY_LLM_KEY: "sk-2" },
    );
    expect((await named.gw.post({ platform: "p", chat: "c", content: "x" })).status).toBe(200);
    expect(named.fake.requests[0]!.headers.authorization).toBe("Bearer sk-2");
  });

  it("streams: the reply is the concatenation and the gateway's SSE carries the deltas", async () => {
    const { fake, gw } = await setup((_req, res) =>
      answerStream(res, ["He", "llo", ", wor", "ld"]),
    );
    const res = await streamMessage(gw.url("/v1/messages"), "greet me");
    expect(res.status).toBe(200);
    const events = await readSse(res);
    expect(events.map((e) => e.event)).toEqual([
      "stored",
      "delta",
      "delta",
      "delta",
      "delta",
      "reply",
    ]);
    expect(events.filter((e) => e.event === "delta").map((e) => e.data.text)).toEqual([
      "He",
      "llo",
      ", wor",
      "ld",
    ]);
    const reply = events.at(-1)!.data;
    expect(reply.reply.content).toBe("Hello, world");
    expect(fake.requests[0]!.body).toMatchObject({ model: "m", stream: true });

    // Non-streaming HTTP answer, streaming upstream: same text.
    const plain = await gw.post({ platform: "web", chat: "s", content: "again" });
    expect(plain.body.reply.content).toBe("Hello, world");
    const stored = await gw.get(`/v1/sessions/${reply.session.id}`);
    expect(stored.body.messages.map((m: { content: string }) => m.content)).toEqual([
      "greet me",
      "Hello, world",
      "again",
      "Hello, world",
    ]);
  });

  it("keeps the streamed text when the final event carries an empty message", async () => {
    const finals = [
      { choices: [{ index: 0, delta: {}, message: { role: "assistant", content: "" } }] },
      { choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }] },
    ];
    let n = 0;
    const { home, gw } = await setup((_req, res) =>
      answerStream(res, ["Kept ", "text"], finals[n++ % 2]),
    );
    for (let i = 0; i < 2; i++) {
      const r = await gw.post({ platform: "web", chat: "f", content: `q${i}` });
      expect(r.status).toBe(200);
      expect(r.body.reply.content).toBe("Kept text");
    }
    const sse = await readSse(await streamMessage(gw.url("/v1/messages"), "q2", "f"));
    expect(sse.at(-1)!.data.reply.content).toBe("Kept text");
    // Never a blank assistant message in the store.
    await withStore(home, async (store) => {
      const [session] = (await store.sessions.list()).items;
      const assistants = (await store.messages.load(session!.id)).filter(
        (m) => m.role === "assistant",
      );
      expect(assistants.map((m) => m.content)).toEqual(["Kept text", "Kept text", "Kept text"]);
    });
  });

  it("a failing endpoint is a 502, the failed turn is stored, and the gateway keeps serving", async () => {
    let healthy = false;
    const { fake, home, gw } = await setup((_req, res) => {
      if (healthy) answerStream(res, ["back"]);
      else res.writeHead(500, { "content-type": "application/json" }).end('{"error":"boom"}');
    });
    const failed = await gw.post({ platform: "web", chat: "x", content: "are you there?" });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ code: "HEARTH_RESPONDER_FAILED" });
    expect(failed.body.error.message).toContain("500");
    const { sessionId, messageId, failedTurnMessageId } = failed.body.error.details;

    const sse = await readSse(await streamMessage(gw.url("/v1/messages"), "still there?", "x"));
    expect(sse.map((e) => e.event)).toEqual(["stored", "error"]);
    expect(sse[1]!.data.error.code).toBe("HEARTH_RESPONDER_FAILED");

    const stored = await gw.get(`/v1/sessions/${sessionId}`);
    const messages = stored.body.messages as {
      id: number;
      role: string;
      name: string | null;
      content: unknown;
    }[];
    expect(messages.map((m) => [m.role, m.name])).toEqual([
      ["user", null],
      ["assistant", "hearth.turn_failed"],
      ["user", null],
      ["assistant", "hearth.turn_failed"],
    ]);
    expect(messages[0]).toMatchObject({ id: messageId, content: "are you there?" });
    expect(messages[1]).toMatchObject({
      id: failedTurnMessageId,
      content: { turnFailed: true, code: "HEARTH_RESPONDER_FAILED", responder: "openai" },
    });

    healthy = true;
    const next = await gw.post({ platform: "web", chat: "x", content: "now?" });
    expect(next.status).toBe(200);
    expect(next.body.reply.content).toBe("back");
    expect(next.body.session.id).toBe(sessionId);
    expect(fake.requests).toHaveLength(3);
    expect(gw.child.exitCode).toBeNull();
    await withStore(home, async (s) => expect((await s.counts()).messages).toBe(6));
  });
});

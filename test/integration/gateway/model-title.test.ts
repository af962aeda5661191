/**
 * Model-generated session titles (issue 47): with an OpenAI-compatible
 * responder, the first exchange's title comes from one short auxiliary
 * request (recorded: `titledBy` in the session's metadata), sent after the
 * reply and never delaying it; when it fails the heuristic titles the
 * session; a user's rename always wins. A real gateway process and a fake
 * endpoint on loopback.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import {
  answerJson,
  closeFakes,
  type GatewayChild,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

afterEach(closeFakes);

/** A fake endpoint whose title requests wait for `release()` and then answer `title`. */
async function setup(title: (res: ServerResponse) => void) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const fake = await startFakeOpenAi((_req, res) =>
    answerJson(res, "Here is a plan for your weekend."),
  );
  fake.titleHandler = async (_req, res) => {
    await released;
    title(res);
  };
  const home = tempHome();
  writeConfig(home, {
    gateway: {
      responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: false },
    },
  });
  const gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined } });
  return { fake, home, gw, release };
}

/** Whether the gateway logged (stderr, JSON lines) this event. */
const logged = (gw: GatewayChild, event: string) =>
  gw.process.stderr.includes(`"event":"${event}"`);

/** The first exchange of chat "c": answered (200) whatever the title request does; its session id. */
async function ask(gw: GatewayChild, content = "Plan a weekend in Lisbon?"): Promise<string> {
  const first = await gw.post({ platform: "web", chat: "c", content });
  expect(first.status).toBe(200);
  return first.body.session.id as string;
}

/** The session once its automatic title is recorded (metadata.titledBy, written with the title). */
async function recorded(home: string, sid: string) {
  await until(
    "the title, recorded",
    async () => (await session(home, sid)).metadata?.titledBy !== undefined,
  );
  return session(home, sid);
}

const session = (home: string, id: string) =>
  withStore(home, async (s) => (await s.sessions.get(id))!);

describe("model-generated session titles", () => {
  it("titles the first exchange with one short request after the reply, recorded as the model's", async () => {
    const { fake, home, gw, release } = await setup((res) =>
      answerJson(res, '"Weekend in Lisbon."'),
    );
    // The reply comes while the title request is still unanswered.
    const sid = await ask(gw);
    await until("the title request", async () => fake.titleRequests.length > 0);
    expect((await session(home, sid)).title).toBeNull();
    const asked = fake.titleRequests[0]!;
    expect(asked.body).toMatchObject({ model: "m", stream: false });
    expect(JSON.stringify(asked.body.messages)).toContain("Plan a weekend in Lisbon?");
    expect(JSON.stringify(asked.body.messages)).toContain("Here is a plan for your weekend.");
    release();
    expect(await recorded(home, sid)).toMatchObject({
      title: "Weekend in Lisbon",
      titleSource: "auto",
      metadata: { titledBy: "model" },
    });
    await until("session.titled in the log", async () => logged(gw, "session.titled"));
    // One title request per session: later exchanges ask nothing more.
    await gw.post({ platform: "web", chat: "c", content: "And food?" });
    expect(fake.titleRequests).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("falls back to the heuristic when the title request fails", async () => {
    const { home, gw, release } = await setup((res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "overloaded" } }));
    });
    release();
    const sid = await ask(gw);
    expect(await recorded(home, sid)).toMatchObject({
      title: "Plan a weekend in Lisbon?",
      titleSource: "auto",
      metadata: { titledBy: "heuristic" },
    });
    // Logged when the model failed, before the heuristic's title; the line
    // reaches this process through the gateway's stderr pipe, which a busy
    // machine may deliver after the title is readable (a run beside a CPU
    // hog failed here).
    await until("session.model_title_failed in the log", async () =>
      logged(gw, "session.model_title_failed"),
    );
  });

  it("never overwrites a rename made while the model was asked", async () => {
    const { fake, home, gw, release } = await setup((res) => answerJson(res, "Model title"));
    const sid = await ask(gw);
    await until("the title request", async () => fake.titleRequests.length > 0);
    const writer = await openStore({ home });
    await writer.sessions.rename(sid, "Mine");
    await writer.close();
    release();
    await until("the title's answer handled", async () => logged(gw, "session.title_kept"));
    const s = await session(home, sid);
    expect(s).toMatchObject({ title: "Mine", titleSource: "user" });
    expect(s.metadata?.titledBy).toBeUndefined();
  });
});

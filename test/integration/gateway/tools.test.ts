import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import {
  answerStream,
  closeFakes,
  type FakeOpenAi,
  type FakeRequest,
  readSse,
  spawnGateway,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import {
  answerToolCalls,
  linesIn as runs,
  toolFake,
  toolResults,
} from "../../helpers/tool-fake.js";

afterEach(closeFakes);

const TOOLS = join(import.meta.dirname, "../../fixtures/test-tools.mjs");

function setup(fake: FakeOpenAi, tools: Record<string, unknown> = {}) {
  const home = tempHome();
  writeConfig(home, {
    gateway: {
      responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: true },
    },
    tools: {
      enabled: ["count_tool", "current_time", "hang_tool", "fail_tool", "big_tool"],
      modules: [TOOLS],
      settings: {
        count_tool: { file: join(home, "count.log") },
        hang_tool: { file: join(home, "hang.log") },
      },
      ...tools,
    },
  });
  return { home, countFile: join(home, "count.log") };
}

const post = (address: string, chat: string, content: string, stream = false) =>
  fetch(`${address}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform: "web", chat, content, stream }),
  });

/** The live transcript of the only session, as [role, what] pairs. */
async function transcript(home: string) {
  return withStore(home, async (s) => {
    const [session] = (await s.sessions.list()).items;
    if (!session) return [];
    const messages = await s.messages.load(session.id);
    return messages.map((m) => {
      if (m.role === "tool")
        return [m.role, (m.content as { status: string }).status, m.toolCallId];
      if (m.toolCalls) return [m.role, "calls", (m.toolCalls as { id: string }[]).map((c) => c.id)];
      return [m.role, m.name ?? m.content];
    });
  });
}

describe("the tool loop through a real gateway and a fake model", () => {
  it("streams tool calls and results, commits each step, sends the results back to the model", async () => {
    const fake = await toolFake([
      { id: "call_a", name: "count_tool", arguments: { note: "one" } },
      { id: "call_b", name: "current_time", arguments: {} },
    ]);
    const { home, countFile } = setup(fake);
    const gw = await startGateway(home);
    const events = await readSse(await post(gw.address, "c", "use tools", true));
    expect(events.map((e) => e.event)).toEqual([
      "stored",
      "tool_call",
      "tool_result",
      "tool_result",
      "delta",
      "reply",
    ]);
    expect(events[1]!.data.message.toolCalls).toEqual([
      {
        id: "call_a",
        type: "function",
        function: { name: "count_tool", arguments: '{"note":"one"}' },
      },
      { id: "call_b", type: "function", function: { name: "current_time", arguments: "{}" } },
    ]);
    expect(events[2]!.data.message).toMatchObject({
      role: "tool",
      toolCallId: "call_a",
      content: { status: "ok", output: "counted one" },
    });
    expect(events[5]!.data.reply.content).toBe("done with tools");
    expect(runs(countFile)).toBe(1);
    // The model was offered the tools, and got the results with their call ids.
    const first = fake.requests[0]!.body as FakeRequest["body"] & {
      tools?: { function: { name: string } }[];
    };
    expect(first.tools?.map((t) => t.function.name)).toContain("count_tool");
    expect(toolResults(fake.requests[1]!)).toMatchObject([
      { role: "tool", tool_call_id: "call_a", content: "counted one" },
      { role: "tool", tool_call_id: "call_b" },
    ]);
    expect(await transcript(home)).toEqual([
      ["user", "use tools"],
      ["assistant", "calls", ["call_a", "call_b"]],
      ["tool", "ok", "call_a"],
      ["tool", "ok", "call_b"],
      ["assistant", "done with tools"],
    ]);
  });

  it("kill -9 after a tool result: the restarted gateway resumes the turn without running the tool again", async () => {
    const fake = await toolFake([
      { id: "call_k", name: "count_tool", arguments: { note: "once" } },
    ]);
    const { home, countFile } = setup(fake);
    const doomed = spawnGateway(home, {
      env: { HEARTH_FAILPOINTS: "turn.after-tool-result=kill" },
    });
    await doomed.ready;
    await post(doomed.address, "c", "count once").catch(() => undefined);
    expect(await doomed.exited).toMatchObject({ signal: "SIGKILL" });
    expect(doomed.logEvents("failpoint.fired")).toHaveLength(1);
    expect(runs(countFile)).toBe(1);
    expect(await transcript(home)).toEqual([
      ["user", "count once"],
      ["assistant", "calls", ["call_k"]],
      ["tool", "ok", "call_k"],
    ]);
    expect(fake.requests).toHaveLength(1);

    const gw = await startGateway(home);
    await until("the resumed turn's reply", async () => (await transcript(home)).length === 4);
    expect(await transcript(home)).toEqual([
      ["user", "count once"],
      ["assistant", "calls", ["call_k"]],
      ["tool", "ok", "call_k"],
      ["assistant", "done with tools"],
    ]);
    expect(runs(countFile)).toBe(1);
    expect(toolResults(fake.requests[1]!)).toMatchObject([
      { tool_call_id: "call_k", content: "counted once" },
    ]);
    await until("the turn.resumed log line", () => gw.logEvents("turn.resumed").length === 1);
    // The lease went back with the reply: the session takes a new turn at once.
    const next = await post(gw.address, "c", "again");
    expect(next.status).toBe(200);
  });

  it("kill -9 after a tool ran but before its result: reported as interrupted, never rerun", async () => {
    const fake = await toolFake([
      { id: "call_i", name: "count_tool", arguments: { note: "maybe" } },
    ]);
    const { home, countFile } = setup(fake);
    const doomed = spawnGateway(home, {
      env: { HEARTH_FAILPOINTS: "turn.before-tool-result=kill" },
    });
    await doomed.ready;
    await post(doomed.address, "c", "count").catch(() => undefined);
    expect(await doomed.exited).toMatchObject({ signal: "SIGKILL" });
    expect(runs(countFile)).toBe(1);
    await startGateway(home);
    await until("the resumed turn's reply", async () => (await transcript(home)).length === 4);
    expect(await transcript(home)).toEqual([
      ["user", "count"],
      ["assistant", "calls", ["call_i"]],
      ["tool", "interrupted", "call_i"],
      ["assistant", "done with tools"],
    ]);
    expect(runs(countFile)).toBe(1);
  });

  it("a timeout, an error, an unknown tool and a huge output become tool results, never a crashed turn", async () => {
    const fake = await toolFake([
      { id: "t1", name: "hang_tool", arguments: {} },
      { id: "t2", name: "fail_tool", arguments: {} },
      { id: "t3", name: "no_such_tool", arguments: {} },
      { id: "t4", name: "big_tool", arguments: {} },
    ]);
    const { home } = setup(fake, { timeoutMs: 200, maxOutputBytes: 1000 });
    const gw = await startGateway(home);
    const res = await post(gw.address, "c", "break things");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { reply: { content: string } }).reply.content).toBe(
      "done with tools",
    );
    const results = toolResults(fake.requests[1]!);
    expect(results.map((r) => r.content.split(" ")[0])).toEqual([
      "[timeout]",
      "[error]",
      "[error]",
      expect.stringMatching(/^é+\n\[output$/),
    ]);
    expect(results[1]!.content).toContain("fail_tool failed on purpose");
    expect(results[2]!.content).toContain("no tool named no_such_tool");
    expect(Buffer.byteLength(results[3]!.content)).toBeLessThanOrEqual(1000);
  });

  it("stops offering tools after tools.maxRounds and takes the answer", async () => {
    let n = 0;
    const fake = await startFakeOpenAi((req, res) => {
      if ((req.body as { tools?: unknown }).tools)
        answerToolCalls(res, [{ id: `r${++n}`, name: "current_time", arguments: {} }]);
      else answerStream(res, ["enough"]);
    });
    const { home } = setup(fake, { maxRounds: 2 });
    const gw = await startGateway(home);
    const res = await post(gw.address, "c", "loop forever");
    expect(((await res.json()) as { reply: { content: string } }).reply.content).toBe("enough");
    expect(fake.requests).toHaveLength(3);
    expect(n).toBe(2);
  });

  it("a streaming client that disconnects mid-tool stops the turn at the next step, recorded as cancelled", async () => {
    const fake = await toolFake([
      { id: "s1", name: "hang_tool", arguments: {} },
      { id: "s2", name: "count_tool", arguments: { note: "never" } },
    ]);
    const { home, countFile } = setup(fake, { timeoutMs: 1500 });
    const gw = await startGateway(home);
    const controller = new AbortController();
    const res = await fetch(`${gw.address}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ platform: "web", chat: "c", content: "go", stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("event: tool_call"))
      seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await until("the cancelled marker", async () =>
      (await transcript(home)).some((m) => m[1] === "hearth.turn_cancelled"),
    );
    expect(await transcript(home)).toEqual([
      ["user", "go"],
      ["assistant", "calls", ["s1", "s2"]],
      ["tool", "timeout", "s1"],
      ["tool", "cancelled", "s2"],
      ["assistant", "hearth.turn_cancelled"],
    ]);
    expect(runs(countFile)).toBe(0);
    expect(fake.requests).toHaveLength(1);
    // The lease was released with the marker.
    expect((await post(gw.address, "c", "next")).status).toBe(200);
  });
});

describe("built-in tools and the drain", () => {
  it("session_search finds the chat's past sessions by their words and titles; session_read pages one", async () => {
    const h = tempHome();
    mkdirSync(h, { recursive: true, mode: 0o700 });
    const store = await openStore({ home: h });
    // An earlier, ended session of the same chat: the turn's session is a new one.
    const past = await store.sessions.create({
      source: "web",
      chatKey: "now",
      title: "Trip planning",
    });
    await store.messages.appendBatch(past.id, [
      { role: "user", content: "book the pineapple express" },
      { role: "assistant", content: "booked for Friday" },
      { role: "user", content: "thanks" },
    ]);
    await store.sessions.end(past.id, "idle");
    await store.close();
    const fake = await toolFake([
      { id: "q", name: "session_search", arguments: { query: "pineapple" } },
      {
        id: "r",
        name: "session_read",
        arguments: { sessionId: past.id, fromOrdinal: 1, limit: 1 },
      },
    ]);
    writeConfig(h, {
      gateway: { responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m" } },
      tools: { enabled: ["session_search", "session_read"] },
    });
    const gw = await startGateway(h);
    expect((await post(gw.address, "now", "what did I book?")).status).toBe(200);
    const [search, read] = toolResults(fake.requests[1]!).map((r) => JSON.parse(r.content));
    expect(search).toEqual([
      expect.objectContaining({
        sessionId: past.id,
        title: "Trip planning",
        snippet: "book the [pineapple] express",
      }),
    ]);
    expect(read).toEqual({
      sessionId: past.id,
      title: "Trip planning",
      messages: [{ ordinal: 1, role: "assistant", content: "booked for Friday" }],
      nextOrdinal: 2,
    });
  });

  it("SIGTERM mid-tool: the drain stops the loop at the next step, records the turn as cancelled, exits 0", async () => {
    const fake = await toolFake([
      { id: "d1", name: "hang_tool", arguments: {} },
      { id: "d2", name: "count_tool", arguments: { note: "never" } },
    ]);
    const { home, countFile } = setup(fake, { timeoutMs: 1000 });
    const gw = await startGateway(home);
    const res = fetch(`${gw.address}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ platform: "web", chat: "c", content: "go" }),
    });
    await until("the tool call committed", async () => (await transcript(home)).length === 2);
    // Readable is not yet running: the gateway starts the tool once its write is acknowledged.
    const hangLog = join(home, "hang.log");
    await until("the hanging tool runs", () => existsSync(hangLog));
    gw.child.kill("SIGTERM");
    const answer = await res;
    expect(answer.status).toBe(499);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
      "HEARTH_TURN_CANCELLED",
    );
    expect(await gw.exited).toEqual({ code: 0, signal: null });
    expect(await transcript(home)).toEqual([
      ["user", "go"],
      ["assistant", "calls", ["d1", "d2"]],
      ["tool", "timeout", "d1"],
      ["tool", "cancelled", "d2"],
      ["assistant", "hearth.turn_cancelled"],
    ]);
    expect(runs(countFile)).toBe(0);
  });
});

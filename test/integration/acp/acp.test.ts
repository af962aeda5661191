import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpChild, joined } from "../../helpers/acp.js";
import { runCli } from "../../helpers/cli.js";
import {
  closeFakes,
  type GatewayChild,
  heldModel,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

afterEach(closeFakes);

const TOOLS = join(import.meta.dirname, "../../fixtures/test-tools.mjs");

/** A script that calls current_time, then answers in several words. */
const TOOL_SCRIPT = [
  { content: "", toolCalls: [{ name: "current_time", arguments: {} }] },
  { content: "the time is known now, thanks for asking" },
];

/** An answer slow enough to act in the middle of it (20 words, 150 ms apart). */
const SLOW_SCRIPT = [
  {
    content: Array.from({ length: 20 }, (_, i) => `word${i}`).join(" "),
    chunkDelayMs: 150,
  },
];

function home(script: unknown[], gateway: Record<string, unknown> = {}) {
  const h = tempHome();
  writeConfig(h, {
    gateway: { responder: { kind: "script", script }, port: 0, ...gateway },
    tools: { enabled: ["current_time"] },
  });
  return h;
}

async function transcript(h: string, sessionId: string) {
  return withStore(h, async (s) =>
    (await s.messages.load(sessionId)).map((m) => [m.role, m.name ?? m.content]),
  );
}

/** A streaming HTTP message "from http" on the ACP session, read up to its first delta. */
async function streamingFromHttp(gw: GatewayChild, sid: string) {
  const streaming = await fetch(gw.url("/v1/messages"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform: "acp", chat: sid, content: "from http", stream: true }),
  });
  const reader = streaming.body!.getReader();
  let seen = "";
  while (!seen.includes("event: delta"))
    seen += new TextDecoder().decode((await reader.read()).value);
  return reader;
}

describe("hearth acp, driven by the ACP SDK's client over real stdio", () => {
  it("new session, a prompt with streamed chunks and tool calls; a second process loads the same history", async () => {
    const h = home(TOOL_SCRIPT);
    const first = new AcpChild(h);
    const init = await first.initialize();
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      sessionCapabilities: { list: {} },
    });
    const sid = await first.newSession("/work/project");
    expect(await first.prompt(sid, "what time is it")).toEqual({ stopReason: "end_turn" });
    const live = joined(first.summary(sid));
    // Statuses move one at a time: pending (committed), in_progress (running), completed.
    expect(live).toEqual([
      ["tool_call", "current_time", expect.any(String)],
      ["tool_call_update", "in_progress", live[0]![2]],
      ["tool_call_update", "completed", live[0]![2]],
      ["agent_message_chunk", "the time is known now, thanks for asking"],
    ]);
    const call = first.updates.find((u) => u.update.sessionUpdate === "tool_call")!.update;
    expect(call).toMatchObject({ status: "pending" });
    // Streamed, not sent whole.
    expect(first.summary(sid).filter((u) => u[0] === "agent_message_chunk").length).toBeGreaterThan(
      1,
    );
    await withStore(h, async (s) => {
      expect(await s.sessions.get(sid)).toMatchObject({ source: "acp", chatKey: sid });
    });

    // A second editor process on the same store, while the first still runs.
    const second = new AcpChild(h);
    await second.initialize();
    await second.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: "/work/project",
      mcpServers: [],
    });
    // The same history; a replayed call goes from pending straight to its result.
    expect(joined(second.summary(sid))).toEqual([
      ["user_message_chunk", "what time is it"],
      ...live.filter((u) => u[1] !== "in_progress"),
    ]);
    const listed = await second.agent.request(acp.methods.agent.session.list, {});
    expect(listed.sessions).toEqual([
      expect.objectContaining({ sessionId: sid, cwd: "/work/project" }),
    ]);
    // Both are ACP holders of the store, each its own kind in hearth ps.
    const ps = await runCli(["ps", "--json"], { home: h });
    const holders = (ps.json() as { profiles: { holders: { pid: number; kind: string }[] }[] })
      .profiles[0]!.holders;
    expect(
      holders
        .filter((x) => x.kind === "acp")
        .map((x) => x.pid)
        .sort(),
    ).toEqual([first.process.pid, second.process.pid].sort());
    // The second continues the session.
    expect(await second.prompt(sid, "and now?")).toEqual({ stopReason: "end_turn" });
    expect((await transcript(h, sid)).map((m) => m[0])).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(await first.close()).toEqual({ code: 0, signal: null });
    expect(await second.close()).toEqual({ code: 0, signal: null });
  });

  it("refuses what the gateway refuses (empty prompt, a lone surrogate, a relative cwd), storing nothing; prompts leave no listener behind", async () => {
    const h = home([{ content: "ok" }]);
    const agent = new AcpChild(h);
    await agent.initialize();
    await expect(agent.newSession("relative/dir")).rejects.toMatchObject({ code: -32602 });
    const sid = await agent.newSession("/work/project");
    await expect(agent.prompt(sid, "")).rejects.toMatchObject({ code: -32602 });
    await expect(agent.prompt(sid, "half a pair \ud800")).rejects.toMatchObject({ code: -32602 });
    expect(await transcript(h, sid)).toEqual([]);
    // Each prompt used to leave a listener on the process's shutdown signal: Node warned at 11.
    for (let i = 0; i < 12; i++)
      expect((await agent.prompt(sid, `p${i}`)).stopReason).toBe("end_turn");
    expect(agent.process.stderr).not.toContain("MaxListenersExceeded");
    await agent.close();
  });

  it("a compacted session loads in another editor starting from its summary", async () => {
    const h = home([{ content: "noted" }], { compactAfterMessages: 4 });
    const first = new AcpChild(h);
    await first.initialize();
    const sid = await first.newSession();
    for (const text of ["one", "two", "three"]) await first.prompt(sid, text);
    expect(await first.close()).toEqual({ code: 0, signal: null });
    // The third prompt compacted the first two exchanges into a summary.
    expect((await transcript(h, sid))[0]).toEqual(["system", "summary"]);

    const second = new AcpChild(h);
    await second.initialize();
    await second.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: "/tmp/project",
      mcpServers: [],
    });
    expect(second.summary(sid)).toEqual([
      ["agent_message_chunk", "[summary of the earlier conversation]\nnoted"],
      ["user_message_chunk", "three"],
      ["agent_message_chunk", "noted"],
    ]);
    expect(await second.close()).toEqual({ code: 0, signal: null });
  });

  it("session/cancel mid-turn ends the prompt as cancelled, recorded, and the process serves on", async () => {
    const h = home(SLOW_SCRIPT);
    const agent = new AcpChild(h);
    await agent.initialize();
    const sid = await agent.newSession();
    const prompt = agent.prompt(sid, "talk slowly");
    await until("the first chunk", () => agent.summary(sid).length > 0);
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    expect(await prompt).toEqual({ stopReason: "cancelled" });
    expect(agent.summary(sid).length).toBeLessThan(20);
    expect(await transcript(h, sid)).toEqual([
      ["user", "talk slowly"],
      ["assistant", "hearth.turn_cancelled"],
    ]);
    // What the editor was shown before the cancel is stored with the marker.
    const shown = joined(agent.summary(sid))[0]![1]!;
    expect(shown.startsWith("word0 ")).toBe(true);
    const marker = await withStore(h, async (s) => (await s.messages.load(sid))[1]!.content);
    expect(marker).toMatchObject({ turnCancelled: true, partial: shown });
    // The lease went with the marker: the session takes the next prompt at once.
    const again = agent.prompt(sid, "again");
    await until("a chunk of the next turn", () => agent.summary(sid).length > 1);
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    expect(await again).toEqual({ stopReason: "cancelled" });
    expect(await agent.close()).toEqual({ code: 0, signal: null });
  });

  it("session/cancel while the prompt waits for another turn on the session: cancelled, nothing of it stored", async () => {
    // The HTTP turn holds at the model until released (not a slow script's fixed 3 s).
    const model = await heldModel();
    const h = home([], { turnWaitMs: 60_000, responder: model.responder });
    const gw = await startGateway(h);
    const agent = new AcpChild(h);
    await agent.initialize();
    const sid = await agent.newSession();
    const reader = await streamingFromHttp(gw, sid);
    // The HTTP turn holds the session: the editor's prompt waits for it, then is cancelled.
    const prompt = agent.prompt(sid, "waiting");
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    expect(await prompt).toEqual({ stopReason: "cancelled" });
    model.release();
    while (!(await reader.read()).done);
    expect(await transcript(h, sid)).toEqual([
      ["user", "from http"],
      ["assistant", model.content],
    ]);
    // Only the HTTP turn reached the model.
    expect(model.fake.requests).toHaveLength(1);
    expect(await agent.close()).toEqual({ code: 0, signal: null });
  });

  it("the editor closing stdin mid-turn: the turn is recorded as cancelled and the process exits 0", async () => {
    const h = home(SLOW_SCRIPT);
    const agent = new AcpChild(h);
    await agent.initialize();
    const sid = await agent.newSession();
    const prompt = agent.prompt(sid, "talk slowly").catch((e: unknown) => e);
    await until("the first chunk", () => agent.summary(sid).length > 0);
    expect(await agent.close()).toEqual({ code: 0, signal: null });
    await prompt;
    expect(await transcript(h, sid)).toEqual([
      ["user", "talk slowly"],
      ["assistant", "hearth.turn_cancelled"],
    ]);
    expect(agent.process.stderr).toContain('"reason":"stdin closed"');
  });

  it("an ACP prompt and a gateway message on one session never run two turns at once", async () => {
    // Each turn holds at the model until released, while the other side tries.
    const model = await heldModel();
    const h = home([], { turnWaitMs: 0, responder: model.responder });
    const gw = await startGateway(h);
    const agent = new AcpChild(h);
    await agent.initialize();
    const sid = await agent.newSession();

    // ACP first: the gateway's message is refused while the ACP turn runs.
    const prompt = agent.prompt(sid, "from the editor");
    await until("the ACP turn streaming", () => agent.summary(sid).length > 0);
    const busy = await gw.post({ platform: "acp", chat: sid, content: "from http, too early" });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("HEARTH_TURN_BUSY");
    model.release();
    expect(await prompt).toEqual({ stopReason: "end_turn" });

    // Then the gateway: the editor's prompt is refused while the HTTP turn runs.
    const reader = await streamingFromHttp(gw, sid);
    const refused = await agent.prompt(sid, "from the editor, too early").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(acp.RequestError);
    expect((refused as acp.RequestError).data).toMatchObject({ code: "HEARTH_TURN_BUSY" });
    model.release();
    while (!(await reader.read()).done);

    // One turn after the other, nothing interleaved, nothing from the refused ones stored.
    expect(await transcript(h, sid)).toEqual([
      ["user", "from the editor"],
      ["assistant", model.content],
      ["user", "from http"],
      ["assistant", model.content],
    ]);
    expect(model.fake.requests).toHaveLength(2);
    await agent.close();
  });

  it("garbage lines, unknown methods, batches and oversized messages get JSON-RPC errors; the process lives on", async () => {
    const h = home(TOOL_SCRIPT);
    const agent = new AcpChild(h, ["--max-message-bytes", "4096"]);
    await agent.initialize();
    const raw = agent.process;
    const answer = (id: unknown) =>
      raw.json<{ id: unknown; error?: { code: number }; result?: unknown }>(
        (m) => m.id === id && (m.error !== undefined || m.result !== undefined),
        `the answer to ${String(id)}`,
      );
    const lines = () => raw.lines.length;

    let before = lines();
    raw.child.stdin.write("this is not json\n");
    await until("the parse error", () => lines() > before);
    expect(JSON.parse(raw.lines.at(-1)!)).toMatchObject({ id: null, error: { code: -32700 } });

    before = lines();
    raw.child.stdin.write("[1,2]\n");
    await until("the batch error", () => lines() > before);
    expect(JSON.parse(raw.lines.at(-1)!)).toMatchObject({ id: null, error: { code: -32600 } });

    raw.child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 901, method: "no/such", params: {} })}\n`,
    );
    expect(await answer(901)).toMatchObject({ error: { code: -32601 } });

    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 902,
      method: "session/new",
      params: { cwd: "/tmp", mcpServers: [], _meta: { pad: "x".repeat(20_000) } },
    });
    raw.child.stdin.write(`${huge.slice(0, 5000)}`);
    raw.child.stdin.write(`${huge.slice(5000)}\n`);
    expect(await answer(902)).toMatchObject({ error: { code: -32600 } });
    // The log line is on stderr, which may be read after the answer on stdout.
    await until("the oversized line logged", () => raw.stderr.includes("acp.message_too_large"));

    // Still serving, through the SDK's client as before.
    const sid = await agent.newSession();
    expect(await agent.prompt(sid, "still there?")).toEqual({ stopReason: "end_turn" });
    expect(raw.running).toBe(true);
    expect(await agent.close()).toEqual({ code: 0, signal: null });
    // stdout carried protocol messages only; the logs went to stderr.
    for (const line of raw.lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    expect(raw.stderr).toContain('"event":"acp.ready"');
  });

  /** A home whose turn calls count_tool (one line per run in count.log), then answers. */
  function countingHome() {
    const h = tempHome();
    writeConfig(h, {
      gateway: {
        port: 0,
        responder: {
          kind: "script",
          script: [
            { content: "", toolCalls: [{ name: "count_tool", arguments: { note: "acp" } }] },
            { content: "counted" },
          ],
        },
      },
      tools: {
        enabled: ["count_tool"],
        modules: [TOOLS],
        settings: { count_tool: { file: join(h, "count.log") } },
      },
    });
    return h;
  }
  const runs = (h: string) => readFileSync(join(h, "count.log"), "utf8").trim().split("\n").length;

  /** hearth acp killed right after its tool's result was stored: a turn left mid-loop. */
  async function killedAfterTool(h: string): Promise<string> {
    const doomed = new AcpChild(h, [], { HEARTH_FAILPOINTS: "turn.after-tool-result=kill" });
    await doomed.initialize();
    const sid = await doomed.newSession();
    await doomed.prompt(sid, "count").catch(() => undefined);
    expect(await doomed.process.exited).toMatchObject({ signal: "SIGKILL" });
    expect(runs(h)).toBe(1);
    return sid;
  }

  /** The interrupted turn finished (its tool not rerun), then the new message's own turn. */
  const finishedThenNew = (content: string) => [
    ["user", "count"],
    ["assistant", ""],
    ["tool", "count_tool"],
    ["assistant", "counted"],
    ["user", content],
    ["assistant", ""],
    ["tool", "count_tool"],
    ["assistant", "counted"],
  ];

  it("kill -9 of hearth acp after a tool result: the editor's next prompt finishes that turn in its sight, then runs", async () => {
    const h = countingHome();
    const sid = await killedAfterTool(h);

    const next = new AcpChild(h);
    await next.initialize();
    await next.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: "/tmp/project",
      mcpServers: [],
    });
    const replayed = next.summary(sid).length;
    // Not refused as busy by a resume of its own process, and not silent.
    expect(await next.prompt(sid, "and again")).toEqual({ stopReason: "end_turn" });
    const live = joined(next.summary(sid).slice(replayed));
    expect(live).toEqual([
      ["agent_message_chunk", "counted"],
      ["tool_call", 'count_tool: "acp"', expect.any(String)],
      ["tool_call_update", "in_progress", live[1]![2]],
      ["tool_call_update", "completed", live[1]![2]],
      ["agent_message_chunk", "counted"],
    ]);
    expect(await transcript(h, sid)).toEqual(finishedThenNew("and again"));
    expect(runs(h)).toBe(2); // one per question: the interrupted call was not run again
    expect(await next.close()).toEqual({ code: 0, signal: null });
  });

  it("a running gateway finishes a turn a killed hearth acp left, before the next message on that session", async () => {
    const h = countingHome();
    // Started first: the turn is interrupted after the gateway's start-up sweep.
    const gw = await startGateway(h);
    const sid = await killedAfterTool(h);

    const res = await gw.post({ platform: "acp", chat: sid, content: "from http" });
    expect(res.status).toBe(200);
    expect(res.body.reply.content).toBe("counted");
    expect(await transcript(h, sid)).toEqual(finishedThenNew("from http"));
    expect(runs(h)).toBe(2);
  });
});

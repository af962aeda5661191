import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiBody,
  closeFakes,
  type FakeOpenAi,
  type GatewayChild,
  type SseEvent,
  spawnGateway,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { linesIn as runs, toolFake, toolResults } from "../../helpers/tool-fake.js";

afterEach(closeFakes);

const TOOLS = join(import.meta.dirname, "../../fixtures/test-tools.mjs");

function setup(fake: FakeOpenAi, tools: Record<string, unknown> = {}) {
  const home = tempHome();
  const file = join(home, "guarded.log");
  writeConfig(home, {
    gateway: { responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: true } },
    tools: {
      enabled: ["guarded_tool", "current_time"],
      modules: [TOOLS],
      settings: { guarded_tool: { file } },
      ...tools,
    },
  });
  return { home, file };
}

/** A streamed turn whose events are read as they come. */
class Stream {
  readonly events: SseEvent[] = [];
  private buffer = "";
  readonly done: Promise<void>;

  constructor(res: Response) {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        this.buffer += decoder.decode(value, { stream: true });
        let end = this.buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
          const data = /^data: (.*)$/m.exec(block)?.[1] ?? "null";
          this.events.push({ event, data: JSON.parse(data) as ApiBody });
          end = this.buffer.indexOf("\n\n");
        }
      }
    })();
  }

  async waitFor(event: string): Promise<ApiBody> {
    await until(`the ${event} event`, () => this.events.some((e) => e.event === event));
    return this.events.find((e) => e.event === event)!.data;
  }

  get names(): string[] {
    return this.events.map((e) => e.event);
  }
}

async function streamTurn(gw: GatewayChild, content: string): Promise<Stream> {
  const res = await fetch(gw.url("/v1/messages"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform: "web", chat: "c", content, stream: true }),
  });
  return new Stream(res);
}

/** A gateway whose turn asks permission, killed -9 while it waits: the request it streamed. */
async function killedWhilePending(home: string): Promise<ApiBody> {
  const doomed = spawnGateway(home);
  await doomed.ready;
  const turn = await streamTurn(doomed, "write it");
  const asked = await turn.waitFor("permission_required");
  expect(await doomed.kill("SIGKILL")).toMatchObject({ signal: "SIGKILL" });
  await turn.done;
  return asked;
}

const answer = (gw: GatewayChild, sessionId: string, callId: string, decision: string) =>
  fetch(gw.url(`/v1/sessions/${sessionId}/permissions/${callId}`), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decision }),
  });

/** The live transcript of the only session, as [role, what] pairs. */
async function transcript(home: string) {
  return withStore(home, async (s) => {
    const [session] = (await s.sessions.list()).items;
    if (!session) return [];
    return (await s.messages.load(session.id)).map((m) => {
      if (m.role === "tool") return [m.role, (m.content as { status: string }).status];
      if (m.toolCalls) return [m.role, "calls"];
      return [m.role, m.content];
    });
  });
}

describe("permission before a tool acts, over HTTP", () => {
  it("pauses with permission_required, runs once on allow_always, and asks no more in that session", async () => {
    // The same call id every turn: the second is stored with a suffix, a call of its own.
    const fake = await toolFake([{ id: "g1", name: "guarded_tool", arguments: { note: "x" } }]);
    const { home, file } = setup(fake);
    const gw = await startGateway(home);
    const turn = await streamTurn(gw, "write it");
    const asked = await turn.waitFor("permission_required");
    expect(asked).toMatchObject({
      toolCallId: "g1",
      tool: "guarded_tool",
      arguments: '{"note":"x"}',
      decision: null,
    });
    expect(Date.parse(asked.deadline)).toBeGreaterThan(Date.parse(asked.requestedAt));
    // Nothing ran yet; the request is committed and listed.
    expect(runs(file)).toBe(0);
    const listed = await gw.get(`/v1/sessions/${asked.sessionId}/permissions`);
    expect(listed.body.permissions.map((p: ApiBody) => p.toolCallId)).toEqual(["g1"]);
    const res = await answer(gw, asked.sessionId, "g1", "allow_always");
    expect(res.status).toBe(200);
    await turn.done;
    expect(turn.names).toEqual([
      "stored",
      "tool_call",
      "permission_required",
      "tool_result",
      "delta",
      "reply",
    ]);
    expect(runs(file)).toBe(1);
    // Answered once: a second answer is refused and changes nothing.
    const again = await answer(gw, asked.sessionId, "g1", "reject");
    expect(again.status).toBe(409);
    expect(((await again.json()) as ApiBody).error.code).toBe("HEARTH_PERMISSION_SETTLED");

    const second = await streamTurn(gw, "write it again");
    await second.done;
    expect(second.names).not.toContain("permission_required");
    expect(runs(file)).toBe(2);
  });

  it("reject: the tool never runs and the model gets a denied result; an unknown call is 404", async () => {
    const fake = await toolFake([{ id: "g2", name: "guarded_tool", arguments: { note: "no" } }]);
    const { home, file } = setup(fake);
    const gw = await startGateway(home);
    const turn = await streamTurn(gw, "write it");
    const asked = await turn.waitFor("permission_required");
    const unknown = await answer(gw, asked.sessionId, "nope", "allow_once");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ApiBody).error.code).toBe("HEARTH_PERMISSION_NOT_FOUND");
    const bad = await answer(gw, asked.sessionId, "g2", "sure");
    expect(bad.status).toBe(400);
    expect((await answer(gw, asked.sessionId, "g2", "reject")).status).toBe(200);
    await turn.done;
    expect(runs(file)).toBe(0);
    expect(toolResults(fake.requests[1]!)).toEqual([
      expect.objectContaining({
        tool_call_id: "g2",
        content: expect.stringMatching(/^\[denied\] denied: the user rejected/),
      }),
    ]);
    expect(await transcript(home)).toEqual([
      ["user", "write it"],
      ["assistant", "calls"],
      ["tool", "denied"],
      ["assistant", "done with tools"],
    ]);
  });

  it("unanswered past tools.permissionTimeoutMs: recorded as expired, the call denied, the turn completes", async () => {
    const fake = await toolFake([{ id: "g3", name: "guarded_tool", arguments: {} }]);
    const { home, file } = setup(fake, { permissionTimeoutMs: 1000 });
    const gw = await startGateway(home);
    const res = await gw.post({ platform: "web", chat: "c", content: "write it" });
    expect(res.status).toBe(200);
    expect(res.body.reply.content).toBe("done with tools");
    expect(runs(file)).toBe(0);
    expect(toolResults(fake.requests[1]!)[0]!.content).toMatch(
      /^\[denied\] denied: nobody answered/,
    );
    const row = await withStore(home, (s) => s.toolPermissions.get(res.body.session.id, "g3"));
    expect(row).toMatchObject({ decision: "expired" });
  });

  it("kill -9 while a permission is pending: the restarted gateway resumes the turn, waits for the answer, runs the tool once", async () => {
    const fake = await toolFake([{ id: "g4", name: "guarded_tool", arguments: { note: "k" } }]);
    const { home, file } = setup(fake);
    const asked = await killedWhilePending(home);
    expect(runs(file)).toBe(0);

    const gw = await startGateway(home);
    // The resumed turn finds its committed request and waits on it.
    await until("the request listed again", async () => {
      const listed = await gw.get(`/v1/sessions/${asked.sessionId}/permissions`);
      return listed.body.permissions?.length === 1;
    });
    expect((await answer(gw, asked.sessionId, "g4", "allow_once")).status).toBe(200);
    await until("the resumed turn's reply", async () => (await transcript(home)).length === 4);
    expect(await transcript(home)).toEqual([
      ["user", "write it"],
      ["assistant", "calls"],
      ["tool", "ok"],
      ["assistant", "done with tools"],
    ]);
    expect(runs(file)).toBe(1);
    expect(fake.requests).toHaveLength(2);
    await until("the turn.resumed log line", () => gw.logEvents("turn.resumed").length === 1);
  });

  it("kill -9 while pending and restarted past the deadline: recorded as expired, the call denied, the turn completes", async () => {
    const fake = await toolFake([{ id: "g5", name: "guarded_tool", arguments: {} }]);
    const { home, file } = setup(fake, { permissionTimeoutMs: 1000 });
    const asked = await killedWhilePending(home);
    await until("the deadline passed", () => Date.now() > Date.parse(asked.deadline), 5_000);
    await startGateway(home);
    await until("the resumed turn's reply", async () => (await transcript(home)).length === 4);
    expect(await transcript(home)).toEqual([
      ["user", "write it"],
      ["assistant", "calls"],
      ["tool", "denied"],
      ["assistant", "done with tools"],
    ]);
    expect(runs(file)).toBe(0);
    const row = await withStore(home, (s) => s.toolPermissions.get(asked.sessionId, "g5"));
    expect(row).toMatchObject({ decision: "expired" });
  });
});

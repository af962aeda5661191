import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { validateConfig } from "../../src/config/validate.js";
import { HearthError } from "../../src/errors.js";
import type { Message } from "../../src/store/types.js";
import { readStream, toWire } from "../../src/turn/openai-stream.js";
import { pendingCalls, uniqueIds } from "../../src/turn/tool-records.js";
import { cap, executeTool } from "../../src/turn/tools/execute.js";
import { McpServers } from "../../src/turn/tools/mcp/servers.js";
import { ToolRegistry } from "../../src/turn/tools/registry.js";
import type { Tool } from "../../src/turn/tools/types.js";

const sse = (events: unknown[]) =>
  new Response(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`)
    .body!;

describe("tools: config, registry, limits, streamed calls", () => {
  it("refuses an enabled name no tool answers to, and a relative module path", async () => {
    const config = validateConfig({ tools: { enabled: ["sesion_search"] } }, "config.json");
    const err = await ToolRegistry.load(config.tools).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HearthError);
    expect(err).toMatchObject({ code: "HEARTH_CONFIG_INVALID" });
    expect((err as HearthError).hint).toContain("session_search");
    expect(() => validateConfig({ tools: { modules: ["tools.mjs"] } }, "config.json")).toThrow(
      /absolute path/,
    );
    for (const sessionScope of ["all", "", null])
      expect(() =>
        validateConfig({ tools: { profiles: { p: { sessionScope } } } }, "config.json"),
      ).toThrow(HearthError);
  });

  it("enables per profile", async () => {
    const config = validateConfig(
      { tools: { enabled: ["current_time"], profiles: { work: { enabled: ["session_search"] } } } },
      "config.json",
    );
    const registry = await ToolRegistry.load(config.tools);
    expect((await registry.specs("default")).map((s) => s.name)).toEqual(["current_time"]);
    expect((await registry.specs("work")).map((s) => s.name)).toEqual(["session_search"]);
    expect(registry.get("work", "current_time")).toBeUndefined();
    expect(registry.sessionScope("work")).toBe("chat");
    const wide = validateConfig(
      { tools: { sessionScope: "profile", profiles: { bot: { sessionScope: "chat" } } } },
      "config.json",
    );
    const wideRegistry = await ToolRegistry.load(wide.tools);
    expect(wideRegistry.sessionScope("default")).toBe("profile");
    expect(wideRegistry.sessionScope("bot")).toBe("chat");
  });

  it("adds an ACP session's MCP servers to that session's registry, unless a configured server or a tool has their name", async () => {
    const config = validateConfig(
      { tools: { mcpServers: { srv: { command: "/bin/true" } } } },
      "config.json",
    );
    const web: Tool = {
      name: "web__get",
      description: "a tool in another server's prefix",
      parameters: { type: "object" },
      idempotent: true,
      run: async () => "",
    };
    const registry = await ToolRegistry.load(config.tools, [web]);
    const session = (name: string) =>
      new McpServers({ mcpServers: { [name]: config.tools.mcpServers.srv! }, profiles: {} });
    expect(registry.mcpNameProblem(["srv"])).toMatch(/"srv" is configured already/);
    expect(registry.mcpNameProblem(["web"])).toMatch(/"web__get" takes the prefix/);
    expect(registry.mcpNameProblem(["docs"])).toBeUndefined();
    expect(() => registry.withSessionTools([], session("web"))).toThrow(HearthError);
    const docs = session("docs");
    // Not started by being asked for: the same permission default as a configured server's tool.
    expect(registry.withSessionTools([], docs).get("default", "docs__find")).toMatchObject({
      requiresPermission: true,
    });
    expect(registry.get("default", "docs__find")).toBeUndefined();
    await registry.close();
    await docs.close();
  });

  it("cuts output on a character boundary and says so", () => {
    const text = cap("é".repeat(1000), 300);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(300);
    expect(text).toMatch(/^é+\n\[output cut: 2000 bytes, limit 300\]$/);
  });

  it("turns bad arguments and throws into results", async () => {
    const tool: Tool = {
      name: "t",
      description: "",
      parameters: {},
      idempotent: false,
      run: async () => {
        throw new Error("boom");
      },
    };
    const ctx = {
      store: undefined as never,
      profile: "default",
      sessionId: "s",
      signal: new AbortController().signal,
      settings: {},
    };
    const limits = { timeoutMs: 1000, maxOutputBytes: 1000 };
    const call = (args: string) => ({
      id: "c",
      type: "function" as const,
      function: { name: "t", arguments: args },
    });
    expect(await executeTool(tool, call("{"), ctx, limits)).toMatchObject({ status: "error" });
    expect(await executeTool(tool, call("[1]"), ctx, limits)).toMatchObject({ status: "error" });
    expect(await executeTool(tool, call("{}"), ctx, limits)).toEqual({
      status: "error",
      output: "boom",
    });
  });

  it("assembles streamed tool-call deltas by index", async () => {
    const answer = await readStream(
      sse([
        {
          choices: [
            {
              delta: {
                tool_calls: [{ index: 0, id: "a", function: { name: "x", arguments: '{"q":' } }],
              },
            },
          ],
        },
        {
          choices: [
            {
              delta: {
                tool_calls: [{ index: 1, id: "b", function: { name: "y", arguments: "" } }],
              },
            },
          ],
        },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '"hi"}' } }] } }] },
      ]),
    );
    expect(answer).toEqual({
      content: "",
      toolCalls: [
        { id: "a", type: "function", function: { name: "x", arguments: '{"q":"hi"}' } },
        { id: "b", type: "function", function: { name: "y", arguments: "" } },
      ],
    });
  });

  it("finds the calls a transcript left without results", () => {
    const m = (over: Partial<Message>): Message =>
      ({ role: "assistant", content: "", toolCalls: null, toolCallId: null, ...over }) as Message;
    const calls = [
      { id: "1", type: "function", function: { name: "x", arguments: "{}" } },
      { id: "2", type: "function", function: { name: "x", arguments: "{}" } },
    ];
    expect(pendingCalls([m({ role: "user" }), m({ toolCalls: calls })]).map((c) => c.id)).toEqual([
      "1",
      "2",
    ]);
    expect(
      pendingCalls([m({ toolCalls: calls }), m({ role: "tool", toolCallId: "1" })]).map(
        (c) => c.id,
      ),
    ).toEqual(["2"]);
    expect(pendingCalls([m({ toolCalls: calls }), m({ role: "user" })])).toEqual([]);
    expect(DEFAULT_CONFIG.tools.enabled).toEqual([]);
  });
});

describe("the transcript on the wire", () => {
  it("answers a call a cut-short turn left without a result, and only that one", () => {
    const m = (over: Partial<Message>): Message =>
      ({
        role: "user",
        content: "x",
        name: null,
        toolCalls: null,
        toolCallId: null,
        ...over,
      }) as Message;
    const calls = [
      { id: "a", type: "function", function: { name: "t", arguments: "{}" } },
      { id: "b", type: "function", function: { name: "t", arguments: "{}" } },
    ];
    const wire = toWire([
      m({}),
      m({ role: "assistant", content: "", toolCalls: calls }),
      m({ role: "tool", toolCallId: "a", content: { status: "ok", output: "fine" } }),
      m({ content: "next question" }),
    ]);
    expect(wire.map((w) => [w.role, w.tool_call_id ?? null, w.content])).toEqual([
      ["user", null, "x"],
      ["assistant", null, ""],
      ["tool", "a", "fine"],
      ["tool", "b", "[interrupted] no result was recorded"],
      ["user", null, "next question"],
    ]);
  });
});

describe("tool call ids", () => {
  it("renames an id the transcript already used, so results pair with the right call", () => {
    const call = (id: string) => ({
      id,
      type: "function" as const,
      function: { name: "t", arguments: "{}" },
    });
    const earlier = { role: "assistant", toolCalls: [call("call_0")] } as unknown as Message;
    const ids = uniqueIds([call("call_0"), call("call_1"), call("call_1")], [earlier]).map(
      (c) => c.id,
    );
    expect(ids[0]).toMatch(/^call_0_[0-9a-f]{8}$/);
    expect(ids[1]).toBe("call_1");
    expect(ids[2]).toMatch(/^call_1_[0-9a-f]{8}$/);
  });
});

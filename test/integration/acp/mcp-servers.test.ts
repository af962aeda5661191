// The MCP servers an editor sends in session/new and session/load (issue
// 45.5): a real MCP server process (test/fixtures/mcp-server.mjs) that
// `hearth acp` starts over stdio for that session alone, its tools offered
// as <server>__<tool> with the configured servers' permission defaults.
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpChild } from "../../helpers/acp.js";
import { withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { killServers, mcpRuns, MCP_SERVER as SERVER } from "../../helpers/mcp.js";
import { isRunning, spawnNode, until } from "../../helpers/process.js";

const PROJECT = "/work/project";
/** The editor offers its files, so every session has tools (and the script's calls are made). */
const FILES = { fs: { readTextFile: true } };

/** Server pids the tests saw, killed after each test if still alive. */
const seen = new Set<number>();
afterEach(() => killServers(seen));

/** A home whose turns call srv__pid (read-only) and srv__count, then answer "done". */
function setup() {
  const home = tempHome();
  const log = join(home, "..", "mcp.log");
  writeConfig(home, {
    gateway: {
      responder: {
        kind: "script",
        script: [
          {
            content: "",
            toolCalls: [
              { name: "srv__pid", arguments: {} },
              { name: "srv__count", arguments: { note: "a" } },
            ],
          },
          { content: "done" },
        ],
      },
    },
  });
  const srv: acp.McpServer = {
    name: "srv",
    command: process.execPath,
    args: [SERVER],
    // It outlives its stdin: only hearth stopping it ends it.
    env: [
      { name: "MCP_LOG", value: log },
      { name: "MCP_STAY", value: "1" },
    ],
  };
  return { home, log, srv };
}

/** The server's tool runs, as "<tool> <note>". */
const runs = (log: string) => mcpRuns(log, seen).map((r) => `${r.tool} ${r.note}`);

const toolRows = (h: string, sessionId: string) =>
  withStore(h, async (s) =>
    (await s.messages.load(sessionId))
      .filter((m) => m.role === "tool")
      .map((m) => {
        const c = m.content as { status: string; output?: string };
        return [m.name, c.status, c.output];
      }),
  );

const allowOnce = () => ({ outcome: { outcome: "selected" as const, optionId: "allow_once" } });

describe("hearth acp connects the editor's MCP servers for their session", () => {
  it("calls the server's tools in a prompt, asks before one that changes something; another session has none; the server stops with the process", async () => {
    const { home, log, srv } = setup();
    const editor = new AcpChild(home);
    const init = await editor.initialize(FILES);
    expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true });
    editor.answerPermission = allowOnce;
    const sid = await editor.newSession(PROJECT, [srv]);
    expect(await editor.prompt(sid, "count")).toEqual({ stopReason: "end_turn" });
    // pid says readOnlyHint: no question; count changes something: the editor is asked first.
    expect(editor.permissionRequests.map((r) => r.toolCall.title)).toEqual(['srv__count: "a"']);
    const rows = await toolRows(home, sid);
    expect(rows.map((r) => r.slice(0, 2))).toEqual([
      ["srv__pid", "ok"],
      ["srv__count", "ok"],
    ]);
    expect(rows[1]![2]).toBe("counted a");
    const pid = Number(rows[0]![2]);
    seen.add(pid);
    expect(isRunning(pid)).toBe(true);
    expect(runs(log)).toEqual(["count a"]);

    // Another session of the same editor, sent no servers: the same calls find no such tools.
    const other = await editor.newSession(PROJECT);
    expect(await editor.prompt(other, "count")).toEqual({ stopReason: "end_turn" });
    expect((await toolRows(home, other)).map((r) => r[1])).toEqual(["error", "error"]);
    expect(editor.permissionRequests).toHaveLength(1);
    expect(runs(log)).toEqual(["count a"]);

    expect(await editor.close()).toEqual({ code: 0, signal: null });
    await until("the editor's MCP server stops with hearth acp", () => !isRunning(pid));
  });

  it("session/load with another list stops the session's servers; a malformed entry is refused, naming it, changing nothing", async () => {
    const { home, srv } = setup();
    const editor = new AcpChild(home);
    await editor.initialize(FILES);
    editor.answerPermission = allowOnce;
    const sid = await editor.newSession(PROJECT, [srv]);
    await editor.prompt(sid, "count");
    const pid = Number((await toolRows(home, sid))[0]![2]);
    seen.add(pid);
    expect(isRunning(pid)).toBe(true);

    const bad: [unknown[], string][] = [
      [[{ ...srv, name: "two words" }], '"two words"'],
      [[srv, srv], "another server has this name"],
      [[{ type: "http", name: "web", url: "ftp://x/", headers: [] }], 'mcpServers[0] ("web").url'],
      [[{ type: "sse", name: "old", url: "http://127.0.0.1:1/sse", headers: [] }], "SSE"],
    ];
    for (const [list, named] of bad) {
      const servers = list as acp.McpServer[];
      const refused = { code: -32602, message: expect.stringContaining(named) };
      await expect(editor.newSession(PROJECT, servers)).rejects.toMatchObject(refused);
      await expect(editor.loadSession(sid, "/elsewhere", servers)).rejects.toMatchObject(refused);
    }
    // An entry not of ACP's shape is refused by the SDK, its data naming the entry.
    const shapeless = [{ ...srv, env: [{ name: "MCP_LOG" }] }] as acp.McpServer[];
    await expect(editor.newSession(PROJECT, shapeless)).rejects.toMatchObject({
      code: -32602,
      data: { mcpServers: { 0: { env: expect.anything() } } },
    });
    // Nothing changed: no session made, the cwd kept, the server still up.
    expect(await withStore(home, async (s) => (await s.sessions.list()).items.length)).toBe(1);
    expect(await withStore(home, (s) => s.meta.get(`acp-cwd:${sid}`))).toBe(PROJECT);
    expect(isRunning(pid)).toBe(true);

    // The same list again keeps it; none stops it.
    await editor.loadSession(sid, PROJECT, [srv]);
    expect(isRunning(pid)).toBe(true);
    await editor.loadSession(sid, PROJECT, []);
    await until("the dropped server stops", () => !isRunning(pid));
    expect(await editor.close()).toEqual({ code: 0, signal: null });
  });

  it("an http server (mcpCapabilities.http) with the editor's headers", async () => {
    const { home, log } = setup();
    const http = spawnNode([SERVER, "--http", "0"], { env: { MCP_LOG: log, MCP_TOKEN: "t0k" } });
    const url = (await http.line((l) => l.startsWith("listening "))).slice("listening ".length);
    const editor = new AcpChild(home);
    await editor.initialize(FILES);
    editor.answerPermission = allowOnce;
    const headers = [{ name: "Authorization", value: "Bearer t0k" }];
    const sid = await editor.newSession(PROJECT, [{ type: "http", name: "srv", url, headers }]);
    expect(await editor.prompt(sid, "count")).toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests.map((r) => r.toolCall.title)).toEqual(['srv__count: "a"']);
    expect((await toolRows(home, sid)).map((r) => r[1])).toEqual(["ok", "ok"]);
    expect(runs(log)).toEqual(["count a"]);
    expect(await editor.close()).toEqual({ code: 0, signal: null });
  });
});

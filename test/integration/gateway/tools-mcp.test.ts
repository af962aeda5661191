// MCP tools in the gateway's tool loop (issue 45.3), driven by the scripted
// responder against a real MCP server process (test/fixtures/mcp-server.mjs,
// the SDK's server side) that the gateway starts over stdio. The loop's
// exactly-once bookkeeping (D7) holds for them as for every tool: a kill -9
// of the gateway mid-call leaves the call recorded `interrupted`, never run
// again; a kill -9 of the server mid-call is an error result, the turn
// finishes, and the next call starts a new server.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiBody,
  closeFakes,
  metric,
  spawnGateway,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { killServers, mcpRuns, MCP_SERVER as SERVER } from "../../helpers/mcp.js";
import { isRunning, spawnNode, until } from "../../helpers/process.js";

/** Server processes the tests saw (from the run log), killed after each test if still alive. */
const seen = new Set<number>();
afterEach(async () => {
  killServers(seen);
  await closeFakes();
});

/** One line per real run of a server tool: "<tool> <pid> <note>". */
const runs = (log: string) => mcpRuns(log, seen);

/** A home whose gateway answers every message with `calls` to server `srv`, then "done". */
function setup(
  calls: { name: string; arguments: Record<string, unknown> }[],
  env: Record<string, string> = {},
  server?: Record<string, unknown>,
  permission: Record<string, unknown> = { requiresPermission: false },
) {
  const home = tempHome();
  const log = join(home, "..", "mcp.log");
  const stdio = { command: process.execPath, args: [SERVER], env: { MCP_LOG: log, ...env } };
  writeConfig(home, {
    gateway: {
      port: 0,
      responder: {
        kind: "script",
        script: [{ content: "", toolCalls: calls }, { content: "done" }],
      },
    },
    tools: {
      // These tests are about the bookkeeping, not the permission step (its own tests ask).
      mcpServers: { srv: { ...permission, ...(server ?? stdio) } },
    },
  });
  return { home, log };
}

const message = (content: string) => ({ platform: "web", chat: "c", content });

/** The live transcript of the only session, as [role, status or content] rows. */
async function transcript(home: string) {
  return withStore(home, async (s) => {
    const [session] = (await s.sessions.list()).items;
    if (!session) return [];
    return (await s.messages.load(session.id)).map((m) => {
      if (m.role === "tool") {
        const c = m.content as { status: string; output: string };
        return [m.role, m.name, c.status, c.output];
      }
      if (m.toolCalls)
        return [
          m.role,
          (m.toolCalls as { function: { name: string } }[]).map((c) => c.function.name),
        ];
      return [m.role, m.content];
    });
  });
}

describe("MCP tools in the gateway's tool loop", () => {
  it("runs them like any tool, counts calls per server and outcome in /metrics, and stops the server on SIGTERM", async () => {
    // A server that ignores its stdin closing: only the gateway's drain stops it.
    const { home, log } = setup(
      [
        { name: "srv__count", arguments: { note: "a" } },
        { name: "srv__fail", arguments: {} },
      ],
      { MCP_STAY: "1" },
    );
    const gw = await startGateway(home);
    const res = await gw.post(message("use mcp"));
    expect(res.status).toBe(200);
    expect(res.body.reply.content).toBe("done");
    expect(await transcript(home)).toEqual([
      ["user", "use mcp"],
      ["assistant", ["srv__count", "srv__fail"]],
      ["tool", "srv__count", "ok", "counted a"],
      ["tool", "srv__fail", "error", "fail failed on purpose"],
      ["assistant", "done"],
    ]);
    expect(runs(log).map((r) => r.tool)).toEqual(["count"]);
    const text = await (await fetch(gw.url("/metrics"))).text();
    const calls = (outcome: string) =>
      metric(text, `hearth_mcp_calls_total{profile="default",server="srv",outcome="${outcome}"}`);
    expect([calls("ok"), calls("error")]).toEqual([1, 1]);
    expect(gw.logEvents("mcp.started")).toHaveLength(1);

    const server = runs(log)[0]!.pid;
    expect(isRunning(server)).toBe(true);
    // Its stderr is in the gateway's log as JSON lines, not mixed into it raw.
    await until("its stderr line logged", () =>
      gw.logEvents("mcp.stderr").some((e) => e.line === `test-mcp up ${server}`),
    );
    expect((await gw.kill("SIGTERM")).code).toBe(0);
    await until("the MCP server stops with the gateway", () => !isRunning(server));
  });

  it("a Streamable HTTP server on loopback, with its headers", async () => {
    const log = join(tempHome(), "..", "http.log");
    const http = spawnNode([SERVER, "--http", "0"], { env: { MCP_LOG: log, MCP_TOKEN: "t0k" } });
    const url = (await http.line((l) => l.startsWith("listening "))).slice("listening ".length);
    const { home } = setup(
      [{ name: "srv__count", arguments: { note: "web" } }],
      {},
      {
        url,
        headers: { Authorization: "Bearer t0k" },
      },
    );
    const gw = await startGateway(home);
    const res = await gw.post(message("over http"));
    expect(res.body.reply.content).toBe("done");
    expect((await transcript(home))[2]).toEqual(["tool", "srv__count", "ok", "counted web"]);
    expect(runs(log).map((r) => [r.tool, r.note])).toEqual([["count", "web"]]);
  });

  it("kill -9 of the server mid-call: an error result, the turn finishes, the next call starts a new server", async () => {
    const { home, log } = setup([
      { name: "srv__pid", arguments: {} },
      { name: "srv__hold", arguments: { note: "x" } },
    ]);
    const gw = await startGateway(home);
    for (const turn of [1, 2]) {
      const answer = gw.post(message(`turn ${turn}`));
      await until(
        "the held call runs",
        () => runs(log).filter((r) => r.tool === "hold").length === turn,
      );
      process.kill(runs(log).filter((r) => r.tool === "hold")[turn - 1]!.pid, "SIGKILL");
      const res = await answer;
      expect(res.status).toBe(200);
      expect(res.body.reply.content).toBe("done");
    }
    const rows = await transcript(home);
    const results = rows.filter((r) => r[0] === "tool");
    expect(results.map((r) => [r[1], r[2]])).toEqual([
      ["srv__pid", "ok"],
      ["srv__hold", "error"],
      ["srv__pid", "ok"],
      ["srv__hold", "error"],
    ]);
    expect(results[1]![3]).toMatch(/closed/i);
    // A new process served the second turn.
    const [first, second] = runs(log)
      .filter((r) => r.tool === "hold")
      .map((r) => r.pid);
    expect(Number(results[0]![3])).toBe(first);
    expect(Number(results[2]![3])).toBe(second);
    expect(second).not.toBe(first);
    expect(gw.logEvents("mcp.stopped").length).toBeGreaterThanOrEqual(1);
  });

  it("kill -9 of the gateway mid-call: the restarted gateway records the call interrupted and never runs it again", async () => {
    const { home, log } = setup([{ name: "srv__hold", arguments: { note: "once" } }]);
    const doomed = spawnGateway(home);
    await doomed.ready;
    void doomed.post(message("hold on")).catch(() => undefined);
    await until("the held call runs", () => runs(log).length === 1);
    expect((await doomed.kill("SIGKILL")).signal).toBe("SIGKILL");
    // Its server saw its stdin close and went too.
    await until("the orphaned server exits", () => !isRunning(runs(log)[0]!.pid));

    const gw = await startGateway(home);
    await until("the resumed turn's reply", async () => (await transcript(home)).length === 4);
    expect(await transcript(home)).toEqual([
      ["user", "hold on"],
      ["assistant", ["srv__hold"]],
      [
        "tool",
        "srv__hold",
        "interrupted",
        "this call was interrupted (the process running it stopped) and its result is unknown; it was not run again",
      ],
      ["assistant", "done"],
    ]);
    expect(runs(log)).toHaveLength(1);
    await until("the turn.resumed log line", () => gw.logEvents("turn.resumed").length === 1);
  });

  it("an MCP tool asks permission by default; one that says readOnlyHint does not", async () => {
    const { home, log } = setup(
      [
        { name: "srv__pid", arguments: {} },
        { name: "srv__count", arguments: { note: "asked" } },
      ],
      {},
      undefined,
      {},
    );
    const gw = await startGateway(home);
    const reply = gw.post(message("use mcp"));
    let asked: ApiBody;
    await until("the permission request", async () => {
      const [session] = await withStore(home, async (s) => (await s.sessions.list()).items);
      if (!session) return false;
      const listed = await gw.get(`/v1/sessions/${session.id}/permissions`);
      if (listed.body.permissions?.length !== 1) return false;
      asked = { sessionId: session.id, ...listed.body.permissions[0] };
      return true;
    });
    expect(asked.tool).toBe("srv__count");
    const answer = await fetch(
      gw.url(`/v1/sessions/${asked.sessionId}/permissions/${asked.toolCallId}`),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "reject" }),
      },
    );
    expect(answer.status).toBe(200);
    expect((await reply).status).toBe(200);
    const rows = await transcript(home);
    expect(rows[2]).toEqual(["tool", "srv__pid", "ok", expect.any(String)]);
    expect(rows[3]).toEqual(["tool", "srv__count", "denied", expect.any(String)]);
    expect(runs(log)).toEqual([]); // count never ran (pid logs nothing)
  });
});

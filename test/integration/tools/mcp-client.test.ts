// The MCP client against a real MCP server process (test/fixtures/mcp-server.mjs,
// the SDK's own server side), over stdio and Streamable HTTP on loopback:
// naming, the allow-list, permission flags, errors as results, a server killed
// mid-call, and restarts. The tool loop around it: tools-mcp.test.ts (gateway).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/config/validate.js";
import { executeTool } from "../../../src/turn/tools/execute.js";
import { ToolRegistry } from "../../../src/turn/tools/registry.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, isRunning, spawnNode, until } from "../../helpers/process.js";

const SERVER = join(import.meta.dirname, "../../fixtures/mcp-server.mjs");
const registries: ToolRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
});

/** Lines the server's tools wrote: one per real run. */
const runs = (log: string) =>
  existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];

async function registry(servers: Record<string, unknown>, tools: Record<string, unknown> = {}) {
  const config = validateConfig({ tools: { mcpServers: servers, ...tools } }, "config.json");
  const r = await ToolRegistry.load(config.tools);
  registries.push(r);
  return r;
}

function stdio(log: string, extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [SERVER], env: { MCP_LOG: log }, ...extra };
}

const ctx = (signal = new AbortController().signal) => ({
  store: undefined as never,
  profile: "default",
  sessionId: "s",
  signal,
  settings: {},
});

async function call(r: ToolRegistry, name: string, args: unknown = {}, timeoutMs = 20_000) {
  return executeTool(
    r.get("default", name),
    { id: "c", type: "function", function: { name, arguments: JSON.stringify(args) } },
    ctx(),
    { timeoutMs, maxOutputBytes: 16_384 },
  );
}

describe("MCP servers over stdio (issue 45.3)", () => {
  it("offers the server's tools as <server>__<tool>, runs them, and turns isError into an error result", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry({ files: stdio(log) });
    const names = (await r.specs("default")).map((s) => s.name).sort();
    expect(names).toEqual([
      "files__count",
      "files__env",
      "files__fail",
      "files__hold",
      "files__pid",
    ]);
    const count = (await r.specs("default")).find((s) => s.name === "files__count")!;
    expect(count.parameters).toMatchObject({ properties: { note: { type: "string" } } });
    expect(await call(r, "files__count", { note: "one" })).toEqual({
      status: "ok",
      output: "counted one",
    });
    expect(await call(r, "files__fail")).toEqual({
      status: "error",
      output: "fail failed on purpose",
    });
    expect(runs(log)).toHaveLength(1);
    // One process served all of it.
    expect(r.mcp!.connection("default", "files").starts).toBe(1);
  });

  it("marks tools requiresPermission unless readOnlyHint or the config says otherwise; idempotent only when listed", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry({
      a: stdio(log, { idempotent: ["count"] }),
      b: stdio(log, { requiresPermission: false }),
    });
    await r.specs("default");
    expect(r.get("default", "a__count")).toMatchObject({
      requiresPermission: true,
      idempotent: true,
    });
    expect(r.get("default", "a__pid")).toMatchObject({
      requiresPermission: false,
      idempotent: false,
    });
    expect(r.get("default", "b__count")).toMatchObject({ requiresPermission: false });
  });

  it("keeps to the allow-list, per profile servers replace the top level, and built-in names stay apart", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry(
      { files: stdio(log, { tools: ["pid"] }) },
      {
        enabled: ["current_time"],
        profiles: { work: { enabled: ["current_time"], mcpServers: { other: stdio(log) } } },
      },
    );
    expect((await r.specs("default")).map((s) => s.name)).toEqual(["current_time", "files__pid"]);
    const denied = await call(r, "files__count", { note: "no" });
    expect(denied.status).toBe("error");
    expect(denied.output).toContain("allow-list");
    expect(runs(log)).toEqual([]);
    expect((await r.specs("work")).map((s) => s.name)).toContain("other__count");
    expect(r.get("work", "files__pid")).toBeUndefined();
  });

  it("passes only the configured environment (and a few basics), not the gateway's", async () => {
    process.env.HEARTH_TEST_SECRET = "leak";
    try {
      const log = join(tempHome(), "..", "mcp.log");
      const r = await registry({ s: stdio(log, { env: { MCP_LOG: log, GIVEN: "yes" } }) });
      expect((await call(r, "s__env", { name: "GIVEN" })).output).toBe("yes");
      expect((await call(r, "s__env", { name: "HEARTH_TEST_SECRET" })).output).toBe("(unset)");
      expect((await call(r, "s__env", { name: "PATH" })).output).toBe(process.env.PATH);
    } finally {
      delete process.env.HEARTH_TEST_SECRET;
    }
  });

  it("kill -9 of the server mid-call: an error result at once, and the next call starts a new process", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry({ s: stdio(log) });
    const first = Number((await call(r, "s__pid")).output);
    const held = call(r, "s__hold", { note: "doomed" });
    await until("the held call runs", () => runs(log).some((l) => l.startsWith("hold")));
    process.kill(first, "SIGKILL");
    const outcome = await held;
    expect(outcome.status).toBe("error");
    expect(outcome.output).toMatch(/closed/i);
    const second = Number((await call(r, "s__pid")).output);
    expect(second).not.toBe(first);
    expect(r.mcp!.connection("default", "s").starts).toBe(2);
  });

  it("a slow call ends at the server's timeoutMs as an error; a server that cannot start is an error result and sits out the specs", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry({
      slow: stdio(log, { timeoutMs: 300 }),
      gone: { command: "/nonexistent/mcp-server" },
    });
    const names = (await r.specs("default")).map((s) => s.name);
    expect(names).toContain("slow__hold");
    expect(names.some((n) => n.startsWith("gone__"))).toBe(false);
    const slow = await call(r, "slow__hold", { note: "slow" });
    expect(slow).toMatchObject({ status: "error" });
    expect(slow.output).toMatch(/timed out/i);
    const gone = await call(r, "gone__anything");
    expect(gone.status).toBe("error");
    expect(gone.output).toContain("MCP server gone did not start");
    // The slow server still serves.
    expect((await call(r, "slow__count", { note: "after" })).output).toBe("counted after");
  });

  it("close() stops the server process", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const r = await registry({ s: stdio(log) });
    const pid = Number((await call(r, "s__pid")).output);
    await r.close();
    await until("the server exits", () => !isRunning(pid));
    expect((await call(r, "s__pid")).status).toBe("error");
  });

  it("a reload keeps running servers whose configuration did not change, and replaces the others", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const first = await registry({ s: stdio(log) });
    const pid = Number((await call(first, "s__pid")).output);
    const same = validateConfig({ tools: { mcpServers: { s: stdio(log) } } }, "c").tools;
    const kept = await ToolRegistry.load(same, [], { previous: first });
    expect(kept.mcp).toBe(first.mcp);
    expect(Number((await call(kept, "s__pid")).output)).toBe(pid);
    const changed = validateConfig(
      { tools: { mcpServers: { s: stdio(log, { timeoutMs: 999 }) } } },
      "c",
    );
    const replaced = await ToolRegistry.load(changed.tools, [], { previous: kept });
    registries.push(replaced);
    expect(replaced.mcp).not.toBe(kept.mcp);
    const none = await ToolRegistry.load(validateConfig({}, "c").tools, [], { previous: kept });
    expect(none.mcp).toBeUndefined();
  });

  it("refuses a module tool that takes a server's prefix, and a server with both command and url", async () => {
    expect(() =>
      validateConfig({ tools: { mcpServers: { s: { command: "x", url: "http://a/" } } } }, "c"),
    ).toThrow(/exactly one of "command"/);
    expect(() =>
      validateConfig({ tools: { mcpServers: { a__b: { command: "x" } } } }, "c"),
    ).toThrow(
      /"tools\.mcpServers\.a__b": the name must be 1-32 letters, digits, _ or -, without __/,
    );
    const config = validateConfig({ tools: { mcpServers: { s: { command: "x" } } } }, "c");
    const squatter = {
      name: "s__count",
      description: "",
      parameters: {},
      idempotent: false,
      run: async () => "",
    };
    await expect(ToolRegistry.load(config.tools, [squatter])).rejects.toMatchObject({
      code: "HEARTH_CONFIG_INVALID",
      message: expect.stringContaining("takes the prefix of MCP server"),
    });
  });
});

describe("MCP servers over Streamable HTTP on loopback", () => {
  let server: Child | undefined;
  afterEach(async () => {
    await server?.kill("SIGKILL");
    server = undefined;
  });

  async function startHttp(port: number, log: string, token?: string): Promise<string> {
    server = spawnNode([SERVER, "--http", String(port)], {
      env: { MCP_LOG: log, ...(token ? { MCP_TOKEN: token } : {}) },
    });
    const line = await server.line((l) => l.startsWith("listening "));
    return line.slice("listening ".length);
  }

  it("calls through headers; a dead server is an error result; once it is back, the next call reconnects", async () => {
    const log = join(tempHome(), "..", "mcp.log");
    const url = await startHttp(0, log, "s3cret");
    const port = Number(new URL(url).port);
    const r = await registry({
      web: { url, headers: { Authorization: "Bearer s3cret" }, timeoutMs: 5000 },
      nokey: { url },
    });
    const names = (await r.specs("default")).map((s) => s.name);
    expect(names).toContain("web__count");
    expect(names.some((n) => n.startsWith("nokey__"))).toBe(false);
    expect(await call(r, "web__count", { note: "http" })).toEqual({
      status: "ok",
      output: "counted http",
    });
    expect(runs(log)).toHaveLength(1);

    await server!.kill("SIGKILL");
    const dead = await call(r, "web__count", { note: "dead" });
    expect(dead.status).toBe("error");
    await startHttp(port, log, "s3cret");
    expect(await call(r, "web__count", { note: "back" })).toEqual({
      status: "ok",
      output: "counted back",
    });
    expect(runs(log).map((l) => l.split(" ")[2])).toEqual(["http", "back"]);
  });
});

// hearth doctor lists each MCP server the profile uses and whether it answers
// (initialize + tools/list within startTimeoutMs), with the real CLI and a
// real SDK server process (issue 45.3).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const SERVER = join(import.meta.dirname, "../../fixtures/mcp-server.mjs");

describe("hearth doctor and MCP servers", () => {
  it("reports a server that answers (with its tool count) and one that does not, as a warning", async () => {
    const home = tempHome();
    writeConfig(home, {
      tools: {
        mcpServers: {
          good: { command: process.execPath, args: [SERVER], tools: ["count", "pid"] },
          // Never answers, and ends when its stdin closes (as most servers do): one that
          // ignores it holds the MCP SDK's close() 2 s before its SIGTERM, in each run.
          silent: {
            command: process.execPath,
            args: ["-e", "process.stdin.resume()"],
            startTimeoutMs: 300,
          },
          web: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer hidden" } },
        },
      },
    });
    const r = await runCli(["doctor", "--json"], { home });
    expect(r.code).toBe(4);
    const report = r.json<{
      mcpServers: { server: string; answers: boolean; tools?: number; target: string }[];
      findings: { code: string; severity: string; message: string }[];
    }>();
    expect(report.mcpServers).toEqual([
      expect.objectContaining({ server: "good", answers: true, tools: 2 }),
      expect.objectContaining({ server: "silent", answers: false }),
      {
        server: "web",
        target: "http: http://127.0.0.1:9/mcp",
        answers: false,
        error: expect.any(String),
      },
    ]);
    const mcp = report.findings.filter((f) => f.code.startsWith("mcp_"));
    expect(mcp.map((f) => [f.code, f.severity])).toEqual([
      ["mcp_server", "ok"],
      ["mcp_server_down", "warning"],
      ["mcp_server_down", "warning"],
    ]);
    expect(r.stdout).not.toContain("hidden");

    const text = await runCli(["doctor"], { home });
    expect(text.stdout).toContain("MCP server good (stdio:");
    expect(text.stdout).toContain("answers: 2 tools");
    expect(text.stdout).toMatch(/WARN {2}MCP server silent .* does not answer/);
  });

  it.runIf(pgEnabled)("lists them for a PostgreSQL store too", async () => {
    const home = tempHome();
    writeConfig(home, {
      store: { url: await freshPgDatabase() },
      tools: { mcpServers: { good: { command: process.execPath, args: [SERVER] } } },
    });
    const r = await runCli(["doctor", "--json"], { home, env: { HEARTH_FAILPOINTS: "" } });
    const report = r.json<{
      backend: string;
      mcpServers: { server: string; answers: boolean; tools?: number }[];
      findings: { code: string; severity: string }[];
    }>();
    expect(report.backend).toBe("postgres");
    expect(report.mcpServers).toEqual([
      expect.objectContaining({ server: "good", answers: true, tools: 5 }),
    ]);
    expect(report.findings).toContainEqual(
      expect.objectContaining({ code: "mcp_server", severity: "ok" }),
    );
  });
});

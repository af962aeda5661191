import type { HearthConfig } from "../../config/schema.js";
import type { McpProbe } from "../../turn/tools/mcp/probe.js";
import type { Finding } from "./finding.js";

/**
 * One finding per MCP server the profile uses (tools.mcpServers): whether it
 * answers initialize and tools/list within its startTimeoutMs. A server that
 * does not is a warning: the agent still answers, without that server's
 * tools. The MCP client is loaded only when a server is configured.
 */
export async function mcpFindings(
  config: HearthConfig,
  profile: string,
): Promise<{ findings: Finding[]; servers?: McpProbe[] }> {
  const tools = config.tools;
  if (Object.keys(tools.profiles[profile]?.mcpServers ?? tools.mcpServers).length === 0)
    return { findings: [] };
  const { probeMcpServers } = await import("../../turn/tools/mcp/probe.js");
  const servers = await probeMcpServers(tools, profile);
  const findings = servers.map(
    (s): Finding =>
      s.answers
        ? {
            code: "mcp_server",
            severity: "ok",
            message: `MCP server ${s.server} (${s.target}) answers: ${s.tools} tools`,
          }
        : {
            code: "mcp_server_down",
            severity: "warning",
            message: `MCP server ${s.server} (${s.target}) does not answer: ${s.error}`,
            fix: `run its command by hand to see why, or fix tools.mcpServers.${s.server} (docs/gateway.md#mcp-servers)`,
          },
  );
  return { findings, servers };
}

import type { HearthConfig } from "../../../config/schema.js";
import type { McpServerConfig } from "../../../config/tools.js";
import { McpConnection } from "./connection.js";

/** Whether one configured MCP server answered initialize and tools/list. */
export interface McpProbe {
  server: string;
  /** `stdio: <command> <args>` or `http: <url>` (headers are never shown: they may hold a key). */
  target: string;
  answers: boolean;
  /** How many tools it listed (after the allow-list). */
  tools?: number;
  error?: string;
}

/**
 * Start each of `profile`'s MCP servers, as the gateway would on first use
 * (within its startTimeoutMs), list its tools, and stop it again. For
 * `hearth doctor`: it changes nothing in the store, but it does run each
 * server's command once.
 */
export async function probeMcpServers(
  tools: HearthConfig["tools"],
  profile: string,
): Promise<McpProbe[]> {
  const servers = tools.profiles[profile]?.mcpServers ?? tools.mcpServers;
  return Promise.all(
    Object.entries(servers).map(async ([server, config]) => {
      const connection = new McpConnection(profile, server, config);
      const target = describe(config);
      try {
        const started = await connection.ensure();
        const listed = started.tools.filter((t) => !config.tools || config.tools.includes(t.name));
        return { server, target, answers: true, tools: listed.length };
      } catch (err) {
        return { server, target, answers: false, error: (err as Error).message };
      } finally {
        await connection.close();
      }
    }),
  );
}

function describe(config: McpServerConfig): string {
  if (config.command !== undefined) return `stdio: ${[config.command, ...config.args].join(" ")}`;
  const url = new URL(config.url!);
  url.username = "";
  url.password = "";
  url.search = "";
  return `http: ${url.href}`;
}

import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { HearthConfig } from "../../../config/schema.js";
import type { McpServerConfig } from "../../../config/tools.js";
import type { Tool, ToolSpec } from "../types.js";
import { McpConnection } from "./connection.js";
import { exposedName, SEPARATOR, serverOf } from "./names.js";
import { resultText } from "./result.js";

/** The part of the tools configuration naming servers (an ACP session's own: `profiles` empty). */
type Servers = Pick<HearthConfig["tools"], "mcpServers" | "profiles">;

/** What the MCP servers tell their process: log lines, and each call's outcome (metrics). */
export interface McpEvents {
  log?: (level: "info" | "warn", fields: Record<string, unknown>, message: string) => void;
  onCall?: (call: { profile: string; server: string; ok: boolean }) => void;
}

/**
 * The MCP servers of `tools.mcpServers` (or `tools.profiles.<name>.mcpServers`),
 * one connection per profile and server, so two profiles never share a
 * server's state. Their tools join the built-ins as `<server>__<tool>`,
 * through the same Tool interface: the tool loop commits, runs and resumes
 * them as it does every other tool (D7).
 */
export class McpServers {
  private readonly connections = new Map<string, McpConnection>();
  private closed = false;

  constructor(
    private readonly config: Servers,
    private readonly events: McpEvents = {},
  ) {}

  /** Whether any profile has a server (else no McpServers is made). */
  static configured(config: Servers): boolean {
    return (
      Object.keys(config.mcpServers).length > 0 ||
      Object.values(config.profiles).some((p) => Object.keys(p.mcpServers ?? {}).length > 0)
    );
  }

  /** Whether `config` names the same servers with the same settings (a reload keeps them running). */
  sameAs(config: Servers): boolean {
    return serversKey(config) === serversKey(this.config);
  }

  /** The servers `profile` uses. */
  serversFor(profile: string): Record<string, McpServerConfig> {
    return this.config.profiles[profile]?.mcpServers ?? this.config.mcpServers;
  }

  /** Every server name any profile uses (the registry keeps other tools out of their prefixes). */
  allNames(): string[] {
    return [
      ...new Set([
        ...Object.keys(this.config.mcpServers),
        ...Object.values(this.config.profiles).flatMap((p) => Object.keys(p.mcpServers ?? {})),
      ]),
    ];
  }

  connection(profile: string, server: string): McpConnection {
    const key = `${profile}\0${server}`;
    let c = this.connections.get(key);
    if (!c) {
      c = new McpConnection(profile, server, this.serversFor(profile)[server]!, (event, fields) =>
        this.events.log?.(
          event === "mcp.started" || event === "mcp.stderr" ? "info" : "warn",
          { event, profile, server, ...fields },
          event,
        ),
      );
      this.connections.set(key, c);
      // Stopped for good: whatever asks now gets a connection that refuses.
      if (this.closed) void c.close();
    }
    return c;
  }

  /**
   * What the model is offered from `profile`'s servers, starting each that
   * is not running. A server that cannot start (or list its tools) within
   * its startTimeoutMs is left out of this request, and logged.
   */
  async specs(profile: string): Promise<ToolSpec[]> {
    const servers = Object.entries(this.serversFor(profile));
    const lists = await Promise.all(
      servers.map(async ([server, config]) => {
        try {
          const { tools } = await this.connection(profile, server).ensure();
          return tools
            .filter((t) => allowed(config, t.name))
            .map((t) => ({
              name: exposedName(server, t.name),
              description: t.description ?? "",
              parameters: t.inputSchema as Record<string, unknown>,
            }));
        } catch {
          // Logged by the connection (mcp.start_failed); its tools sit this request out.
          return [];
        }
      }),
    );
    return lists.flat();
  }

  /** The tool `name` of `profile`'s servers (it may not be running yet: it starts when called). */
  tool(profile: string, name: string): Tool | undefined {
    const servers = this.serversFor(profile);
    const server = serverOf(name, Object.keys(servers));
    if (server === undefined) return undefined;
    const config = servers[server]!;
    const connection = this.connection(profile, server);
    const match = (t: string) => exposedName(server, t) === name && allowed(config, t);
    const listed: McpTool | undefined = connection.tools?.find((t) => match(t.name));
    return {
      name,
      description: listed?.description ?? `a tool of MCP server ${server}`,
      parameters: (listed?.inputSchema as Record<string, unknown>) ?? { type: "object" },
      idempotent: config.idempotent.some(match),
      requiresPermission: config.requiresPermission ?? listed?.annotations?.readOnlyHint !== true,
      run: async (args, ctx) => {
        let ok = false;
        try {
          const { tools } = await connection.ensure();
          const target = tools.find((t) => match(t.name));
          if (!target)
            throw new Error(
              `MCP server ${server} offers no tool ${name.slice(server.length + SEPARATOR.length)}${config.tools ? " (or its tools allow-list leaves it out)" : ""}`,
            );
          const text = resultText(await connection.call(target.name, args, ctx.signal));
          ok = true;
          return text;
        } finally {
          this.events.onCall?.({ profile, server, ok });
        }
      },
    };
  }

  /** Stop every server (the process drains, or a reload changed them). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}

function allowed(config: McpServerConfig, tool: string): boolean {
  return config.tools === undefined || config.tools.includes(tool);
}

function serversKey(config: Servers): string {
  return JSON.stringify([
    config.mcpServers,
    Object.entries(config.profiles).map(([p, s]) => [p, s.mcpServers ?? null]),
  ]);
}

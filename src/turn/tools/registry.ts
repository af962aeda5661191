import type { HearthConfig } from "../../config/schema.js";
import type { SessionScope } from "../../config/tools.js";
import { HearthError } from "../../errors.js";
import { currentTime } from "./builtin/current-time.js";
import { sessionRead } from "./builtin/session-read.js";
import { sessionSearch } from "./builtin/session-search.js";
import { serverOf } from "./mcp/names.js";
import { type McpEvents, McpServers } from "./mcp/servers.js";
import { importToolModule } from "./modules.js";
import type { Tool, ToolSpec } from "./types.js";

const BUILTINS: readonly Tool[] = [sessionSearch, sessionRead, currentTime];

/**
 * The tools a process offers its turns: the built-ins plus those of
 * `tools.modules`, filtered per profile by `tools.enabled` (or
 * `tools.profiles.<name>.enabled`), plus every tool of the profile's MCP
 * servers (`tools.mcpServers`, as `<server>__<tool>`). A name that no tool
 * answers to is a configuration error at load time, never a tool silently
 * missing. close() stops the MCP servers.
 */
export class ToolRegistry {
  private constructor(
    private readonly all: ReadonlyMap<string, Tool>,
    private readonly config: HearthConfig["tools"],
    readonly mcp?: McpServers,
    /** Tools one session brings (an ACP editor's files): offered on every profile, after the rest. */
    private readonly sessionTools: readonly Tool[] = [],
    /** MCP servers one session brings (an ACP editor's): their owner starts and stops them. */
    private readonly sessionMcp?: McpServers,
  ) {}

  /**
   * This registry plus `tools` and the tools of `mcp`'s servers, for one
   * session's turns (an ACP editor's files and MCP servers). They share this
   * registry's MCP servers, which the copy never closes, nor `mcp`. A name
   * another tool has, or a server name taken, is refused.
   */
  withSessionTools(tools: readonly Tool[], mcp?: McpServers): ToolRegistry {
    if (tools.length === 0 && !mcp) return this;
    for (const tool of tools) {
      checkTool(tool, "the session");
      if (this.all.has(tool.name) || this.sessionTools.some((t) => t.name === tool.name))
        throw invalid(`tool ${JSON.stringify(tool.name)} from the session is defined twice`);
    }
    const registry = new ToolRegistry(
      this.all,
      this.config,
      this.mcp,
      [...this.sessionTools, ...tools],
      mcp ?? this.sessionMcp,
    );
    const problem = mcp && registry.mcpNameProblem(mcp.allNames());
    if (problem) throw invalid(problem);
    return registry;
  }

  /**
   * Why MCP servers called `names` cannot join this registry (a configured
   * server has the name, or a tool's name has its prefix), or undefined.
   */
  mcpNameProblem(names: readonly string[]): string | undefined {
    const taken = (this.mcp?.allNames() ?? []).find((n) => names.includes(n));
    if (taken !== undefined) return `MCP server ${JSON.stringify(taken)} is configured already`;
    return prefixProblem([...this.all.keys(), ...this.sessionTools.map((t) => t.name)], names);
  }

  /** No tools at all (a responder that never calls any, or tools switched off). */
  static empty(config: HearthConfig["tools"]): ToolRegistry {
    return new ToolRegistry(new Map(), { ...config, enabled: [], profiles: {} });
  }

  /**
   * `options.previous`: the registry this one replaces (a reload); its MCP
   * servers keep running when their configuration did not change, and the
   * caller closes the previous registry otherwise (`mcp` differs).
   */
  static async load(
    config: HearthConfig["tools"],
    extra: readonly Tool[] = [],
    options: { mcp?: McpEvents; previous?: ToolRegistry } = {},
  ): Promise<ToolRegistry> {
    const all = new Map<string, Tool>();
    const add = (tool: Tool, from: string) => {
      checkTool(tool, from);
      if (all.has(tool.name))
        throw invalid(`tool ${JSON.stringify(tool.name)} from ${from} is defined twice`);
      all.set(tool.name, tool);
    };
    for (const tool of BUILTINS) add(tool, "hearth");
    for (const path of config.modules) {
      const mod = await importToolModule(path);
      if (!Array.isArray(mod.tools))
        throw invalid(`tools.modules: ${path} exports no \`tools\` array`);
      for (const tool of mod.tools as Tool[]) add(tool, path);
    }
    for (const tool of extra) add(tool, "the caller");
    const kept = options.previous?.mcp;
    const mcp = !McpServers.configured(config)
      ? undefined
      : kept?.sameAs(config)
        ? kept
        : new McpServers(config, options.mcp);
    const problem = mcp && prefixProblem(all.keys(), mcp.allNames());
    if (problem) throw invalid(problem);
    const registry = new ToolRegistry(all, config, mcp);
    const named = [
      ...config.enabled,
      ...Object.values(config.profiles).flatMap((p) => p.enabled ?? []),
    ];
    for (const name of [...named, ...config.requirePermission]) {
      if (!all.has(name))
        throw invalid(`tools.enabled names ${JSON.stringify(name)}, which no tool answers to`, [
          ...all.keys(),
        ]);
    }
    return registry;
  }

  /** The tools enabled for `profile`. */
  enabled(profile: string): Tool[] {
    const names = this.config.profiles[profile]?.enabled ?? this.config.enabled;
    const configured = names.map((n) => this.all.get(n)).filter((t): t is Tool => t !== undefined);
    return this.sessionTools.length === 0 ? configured : [...configured, ...this.sessionTools];
  }

  /** What the model is offered on `profile`; its MCP servers (and the session's) start here if they are not running. */
  async specs(profile: string): Promise<ToolSpec[]> {
    const own = this.enabled(profile).map(({ name, description, parameters }) => ({
      name,
      description,
      parameters,
    }));
    const [configured, session] = await Promise.all([
      this.mcp?.specs(profile) ?? [],
      this.sessionMcp?.specs(profile) ?? [],
    ]);
    return [...own, ...configured, ...session];
  }

  /** The enabled tool called `name`, if any. */
  get(profile: string, name: string): Tool | undefined {
    return (
      this.enabled(profile).find((t) => t.name === name) ??
      this.mcp?.tool(profile, name) ??
      this.sessionMcp?.tool(profile, name)
    );
  }

  /** Stop the MCP servers this registry started (none when there are none; never a session's). */
  async close(): Promise<void> {
    await this.mcp?.close();
  }

  /** What the session tools of `profile` may read (tools.profiles.<name>.sessionScope, else tools.sessionScope). */
  sessionScope(profile: string): SessionScope {
    return this.config.profiles[profile]?.sessionScope ?? this.config.sessionScope;
  }

  /** Whether tools.requirePermission names `name` (on top of the tool's own requiresPermission). */
  requiresPermission(name: string): boolean {
    return this.config.requirePermission.includes(name);
  }

  /** How long a permission request waits for an answer before it is recorded as expired (denied). */
  get permissionTimeoutMs(): number {
    return this.config.permissionTimeoutMs;
  }

  settings(name: string): Record<string, unknown> {
    return this.config.settings[name] ?? {};
  }

  get limits() {
    const { maxRounds, timeoutMs, maxOutputBytes } = this.config;
    return { maxRounds, timeoutMs, maxOutputBytes };
  }
}

/** A tool named with an MCP server's prefix (`<server>__`), which only that server's tools may take. */
function prefixProblem(tools: Iterable<string>, servers: readonly string[]): string | undefined {
  for (const name of tools) {
    const server = serverOf(name, servers);
    if (server !== undefined)
      return `tool ${JSON.stringify(name)} takes the prefix of MCP server ${JSON.stringify(server)}'s tools (${server}__)`;
  }
  return undefined;
}

function checkTool(tool: Tool, from: string): void {
  const ok =
    tool !== null &&
    typeof tool === "object" &&
    typeof tool.name === "string" &&
    /^[a-zA-Z0-9_-]{1,64}$/.test(tool.name) &&
    typeof tool.description === "string" &&
    typeof tool.parameters === "object" &&
    typeof tool.idempotent === "boolean" &&
    (tool.requiresPermission === undefined || typeof tool.requiresPermission === "boolean") &&
    typeof tool.run === "function";
  if (!ok)
    throw invalid(
      `a tool from ${from} is not a Tool (name, description, parameters, idempotent, run; requiresPermission a boolean when set)`,
    );
}

function invalid(message: string, known?: string[]): HearthError {
  return new HearthError("HEARTH_CONFIG_INVALID", message, {
    resource: "tools",
    hint: known
      ? `known tools: ${known.join(", ")} (docs/gateway.md#tools)`
      : "see docs/gateway.md#tools",
  });
}

import { pathToFileURL } from "node:url";
import type { HearthConfig } from "../../config/schema.js";
import type { SessionScope } from "../../config/tools.js";
import { HearthError } from "../../errors.js";
import { currentTime } from "./builtin/current-time.js";
import { sessionRead } from "./builtin/session-read.js";
import { sessionSearch } from "./builtin/session-search.js";
import type { Tool, ToolSpec } from "./types.js";

const BUILTINS: readonly Tool[] = [sessionSearch, sessionRead, currentTime];

/**
 * The tools a process offers its turns: the built-ins plus those of
 * `tools.modules`, filtered per profile by `tools.enabled` (or
 * `tools.profiles.<name>.enabled`). A name that no tool answers to is a
 * configuration error at load time, never a tool silently missing.
 */
export class ToolRegistry {
  private constructor(
    private readonly all: ReadonlyMap<string, Tool>,
    private readonly config: HearthConfig["tools"],
  ) {}

  /** No tools at all (a responder that never calls any, or tools switched off). */
  static empty(config: HearthConfig["tools"]): ToolRegistry {
    return new ToolRegistry(new Map(), { ...config, enabled: [], profiles: {} });
  }

  static async load(
    config: HearthConfig["tools"],
    extra: readonly Tool[] = [],
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
      let mod: { tools?: unknown };
      try {
        mod = (await import(pathToFileURL(path).href)) as { tools?: unknown };
      } catch (err) {
        throw invalid(`tools.modules: cannot load ${path}: ${(err as Error).message}`);
      }
      if (!Array.isArray(mod.tools))
        throw invalid(`tools.modules: ${path} exports no \`tools\` array`);
      for (const tool of mod.tools as Tool[]) add(tool, path);
    }
    for (const tool of extra) add(tool, "the caller");
    const registry = new ToolRegistry(all, config);
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
    return names.map((n) => this.all.get(n)).filter((t): t is Tool => t !== undefined);
  }

  specs(profile: string): ToolSpec[] {
    return this.enabled(profile).map(({ name, description, parameters }) => ({
      name,
      description,
      parameters,
    }));
  }

  /** The enabled tool called `name`, if any. */
  get(profile: string, name: string): Tool | undefined {
    return this.enabled(profile).find((t) => t.name === name);
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

import * as acp from "@agentclientprotocol/sdk";
import { type McpServerConfig, mcpServers } from "../config/tools.js";
import { type McpEvents, McpServers } from "../turn/tools/mcp/servers.js";

type Entries = Record<string, McpServerConfig>;

/**
 * The MCP servers an editor sends in `session/new` and `session/load`
 * (docs/acp.md#the-editors-mcp-servers), kept per session in memory only
 * (the editor sends them again with `session/load`). Each session's servers
 * start on its first prompt, through the same McpServers as
 * `tools.mcpServers`, and stop when the session is loaded with another list
 * or the process stops.
 */
export class EditorMcp {
  private readonly sessions = new Map<string, { key: string; servers: McpServers }>();

  constructor(private readonly events: (sessionId: string) => McpEvents) {}

  /** The session's servers, if the editor sent any. */
  get(sessionId: string): McpServers | undefined {
    return this.sessions.get(sessionId)?.servers;
  }

  /** Use `entries` (from check()) for the session: the servers it had stop unless they are the same. */
  async use(sessionId: string, entries: Entries): Promise<void> {
    const key = JSON.stringify(entries);
    const had = this.sessions.get(sessionId);
    if (had?.key === key) return;
    this.sessions.delete(sessionId);
    if (Object.keys(entries).length > 0)
      this.sessions.set(sessionId, {
        key,
        servers: new McpServers({ mcpServers: entries, profiles: {} }, this.events(sessionId)),
      });
    await had?.servers.close();
  }

  /** Stop every session's servers (the process stops). */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.servers.close()));
  }
}

/**
 * The editor's `mcpServers` as `tools.mcpServers` entries, checked by the
 * same schema (a name of 1-32 letters, digits, `_` or `-` without `__`;
 * stdio, or `http` as advertised; no `sse`). A malformed entry, or a name
 * given twice, is refused as invalid params naming it.
 */
export function editorMcpEntries(list: unknown): Entries {
  if (list === undefined || list === null) return {};
  if (!Array.isArray(list)) throw refuse("mcpServers must be an array");
  const entries: Entries = {};
  list.forEach((entry: unknown, i) => {
    const at = `mcpServers[${i}]`;
    const e = (entry ?? {}) as Record<string, unknown>;
    const name = typeof e.name === "string" ? e.name : undefined;
    const label = name === undefined ? at : `${at} (${JSON.stringify(name)})`;
    if (typeof entry !== "object" || name === undefined)
      throw refuse(`${at} is not an MCP server: it needs a "name"`);
    if (name in entries) throw refuse(`${label}: another server has this name`);
    if (e.type === "sse")
      throw refuse(`${label}: SSE servers are not supported (use stdio or http)`);
    const config =
      e.type === "http"
        ? { url: e.url, headers: pairs(e.headers, `${label}.headers`) }
        : e.type === undefined || e.type === "stdio"
          ? { command: e.command, args: e.args ?? [], env: pairs(e.env, `${label}.env`) }
          : undefined;
    if (!config) throw refuse(`${label}: unknown type ${JSON.stringify(e.type)}`);
    const parsed = mcpServers().safeParse({ [name]: config });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.slice(1).join(".");
      throw refuse(`${label}${where ? `.${where}` : ""}: ${issue.message}`);
    }
    entries[name] = parsed.data[name]!;
  });
  return entries;
}

/** ACP's [{name, value}] (env, headers) as a record; anything else is refused. */
function pairs(list: unknown, at: string): Record<string, string> {
  if (list === undefined || list === null) return {};
  if (!Array.isArray(list)) throw refuse(`${at} must be an array of {name, value}`);
  const out: Record<string, string> = {};
  for (const p of list as { name?: unknown; value?: unknown }[]) {
    if (typeof p?.name !== "string" || typeof p.value !== "string")
      throw refuse(`${at} must be an array of {name, value} strings`);
    out[p.name] = p.value;
  }
  return out;
}

function refuse(message: string): acp.RequestError {
  return acp.RequestError.invalidParams(undefined, message);
}

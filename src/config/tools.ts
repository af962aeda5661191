import { isAbsolute } from "node:path";
import type { z as Z } from "zod";
import { once } from "./once.js";
import { int, z } from "./zod.js";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const toolName = () => z.string().regex(TOOL_NAME, "must be 1-64 letters, digits, _ or -");

/**
 * An MCP server's name: its tools reach the model as `<server>__<tool>`, so
 * it holds no `__` and does not end in `_` (the split stays unambiguous).
 */
const MCP_SERVER_NAME = /^(?!.*__)[a-zA-Z0-9](?:[a-zA-Z0-9_-]{0,30}[a-zA-Z0-9-])?$/;

/**
 * One MCP server (docs/gateway.md#mcp-servers): a command hearth starts and
 * speaks to over stdio, or a Streamable HTTP endpoint. It starts on first
 * use, restarts after a crash, stops with the process.
 */
export const mcpServerSchema = once(() =>
  z
    .object({
      /** stdio: the program to start (no shell), its arguments, extra environment and directory. */
      command: z.string().min(1).optional(),
      args: z.array(z.string()).max(256).default([]),
      /** Added to the few variables a server inherits (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
      env: z.record(z.string().min(1), z.string()).default({}),
      cwd: z.string().refine(isAbsolute, "must be an absolute path").optional(),
      /** Streamable HTTP: the endpoint, and headers sent with every request (e.g. Authorization). */
      url: z
        .string()
        .url()
        .refine((v) => /^https?:/.test(v), "must be an http: or https: URL")
        .optional(),
      headers: z.record(z.string().min(1), z.string()).default({}),
      /** Only these of the server's tools (their MCP names) are offered; all when absent. */
      tools: z.array(z.string().min(1)).max(256).optional(),
      /** Tools (MCP names) safe to run again when a crash left their result unknown. */
      idempotent: z.array(z.string().min(1)).max(256).default([]),
      /** Whether its tools ask before they act; unset: yes, unless a tool says readOnlyHint. */
      requiresPermission: z.boolean().optional(),
      /** A call still running after this long is an error result (tools.timeoutMs also applies). */
      timeoutMs: int(10, 600_000).default(30_000),
      /** Starting it (spawn or connect, initialize, tools/list) may take this long. */
      startTimeoutMs: int(10, 120_000).default(10_000),
    })
    .strict()
    .refine((s) => (s.command === undefined) !== (s.url === undefined), {
      message: 'needs exactly one of "command" (stdio) or "url" (Streamable HTTP)',
    }),
);

/** Servers by name (tools.mcpServers; an ACP editor's servers are checked against it too). */
export const mcpServers = once(() =>
  z.record(
    z.string().regex(MCP_SERVER_NAME, "must be 1-32 letters, digits, _ or -, without __"),
    mcpServerSchema(),
  ),
);

/**
 * What the built-in session tools (session_search, session_read) may see:
 * "chat" only the sessions of the current chat (its platform and chat key,
 * or its owner when the session has one); "profile" every session of the
 * profile (docs/security.md#tools-see-only-their-chat).
 */
const sessionScope = () => z.enum(["chat", "profile"]);
export type SessionScope = "chat" | "profile";

export const toolsSchema = once(() => {
  const toolSet = z
    .object({
      /** The tools the model is offered. */
      enabled: z.array(toolName()).max(64).optional(),
      /** Replaces the top-level tools.mcpServers for this profile. */
      mcpServers: mcpServers().optional(),
      /** Overrides the top-level sessionScope for this profile. */
      sessionScope: sessionScope().optional(),
    })
    .strict();

  /**
   * The agent turn's tools (docs/gateway.md#tools). The top level applies to
   * every profile; `profiles.<name>` overrides the enabled set for one.
   */
  return z
    .object({
      /** Off by default: an endpoint that does not support tools would refuse every request. */
      enabled: z.array(toolName()).max(64).default([]),
      /** Model requests that may answer with tool calls in one turn; the last one is sent without tools. */
      maxRounds: int(0, 64).default(8),
      /** A tool still running after this long is stopped; its result says it timed out. */
      timeoutMs: int(10, 600_000).default(30_000),
      /** A tool's result is cut to this many bytes (UTF-8) before it is stored and sent. */
      maxOutputBytes: int(256, 1024 * 1024).default(16 * 1024),
      /** What the built-in session tools may read: the current chat only (default), or the whole profile. */
      sessionScope: sessionScope().default("chat"),
      /** Tools that ask a person before each call, on top of those whose definition says requiresPermission. */
      requirePermission: z.array(toolName()).max(64).default([]),
      /** A permission request unanswered this long is recorded as expired: the call is denied. */
      permissionTimeoutMs: int(1_000, 86_400_000).default(600_000),
      /** ES modules (absolute paths) whose `tools` export is an array of Tool objects. */
      modules: z
        .array(z.string().refine(isAbsolute, "must be an absolute path"))
        .max(32)
        .default([]),
      /** Per-tool settings handed to the tool as ctx.settings, e.g. {"session_read": {"pageSize": 20}}. */
      settings: z.record(toolName(), z.record(z.string(), z.unknown())).default({}),
      /** MCP servers whose tools join the built-ins, as `<server>__<tool>`, for every profile. */
      mcpServers: mcpServers().default({}),
      profiles: z.record(z.string().min(1), toolSet).default({}),
    })
    .strict();
});

export type McpServerConfig = Z.infer<ReturnType<typeof mcpServerSchema>>;

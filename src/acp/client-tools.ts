import { isAbsolute, resolve } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { Tool } from "../turn/tools/types.js";

/** What a terminal command may print before its output is cut (the client cuts it). */
const OUTPUT_BYTE_LIMIT = 16_384;

/**
 * The editor's own capabilities as tools for the model (docs/acp.md#the-editors-files-and-terminal):
 * reading a file through the editor (its unsaved buffers included),
 * writing one, running a command in its terminal. Offered only when the
 * client advertised the capability at `initialize`; a write and a command
 * ask permission first (`session/request_permission`). A path is taken
 * relative to the session's working directory.
 */
export function clientTools(
  client: acp.AgentContext,
  sessionId: string,
  capabilities: acp.ClientCapabilities | undefined,
  cwd: string,
): Tool[] {
  const tools: Tool[] = [];
  const at = (path: unknown) => {
    if (typeof path !== "string" || path === "") throw new TypeError("path must be a file path");
    return isAbsolute(path) ? path : resolve(cwd, path);
  };
  if (capabilities?.fs?.readTextFile)
    tools.push({
      name: "editor_read_file",
      description:
        "Read a text file through the user's editor (including unsaved changes). Optional line (1-based) and limit (lines).",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "absolute, or relative to the project directory" },
          line: { type: "integer", minimum: 1 },
          limit: { type: "integer", minimum: 1 },
        },
        required: ["path"],
      },
      idempotent: true,
      requiresPermission: false,
      async run(args, ctx) {
        const response = await client.request(
          acp.methods.client.fs.readTextFile,
          {
            sessionId,
            path: at(args.path),
            ...(typeof args.line === "number" ? { line: args.line } : {}),
            ...(typeof args.limit === "number" ? { limit: args.limit } : {}),
          },
          { cancellationSignal: ctx.signal, stopWaitingOnCancel: true },
        );
        return response.content;
      },
    });
  if (capabilities?.fs?.writeTextFile)
    tools.push({
      name: "editor_write_file",
      description: "Write a text file through the user's editor (the whole content).",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "absolute, or relative to the project directory" },
          content: { type: "string" },
        },
        required: ["path", "content"],
      },
      // Writing the same content again leaves the same file.
      idempotent: true,
      requiresPermission: true,
      async run(args, ctx) {
        if (typeof args.content !== "string") throw new TypeError("content must be a string");
        const path = at(args.path);
        await client.request(
          acp.methods.client.fs.writeTextFile,
          { sessionId, path, content: args.content },
          { cancellationSignal: ctx.signal, stopWaitingOnCancel: true },
        );
        return `wrote ${Buffer.byteLength(args.content)} bytes to ${path}`;
      },
    });
  if (capabilities?.terminal)
    tools.push({
      name: "editor_run_command",
      description:
        "Run a command in the user's editor terminal, in the project directory; returns its output and exit status.",
      parameters: {
        type: "object",
        properties: {
          command: { type: "string" },
          args: { type: "array", items: { type: "string" } },
        },
        required: ["command"],
      },
      idempotent: false,
      requiresPermission: true,
      async run(args, ctx) {
        if (typeof args.command !== "string" || args.command === "")
          throw new TypeError("command must be a program name");
        const argv = Array.isArray(args.args) ? args.args.map(String) : [];
        const options = { cancellationSignal: ctx.signal, stopWaitingOnCancel: true };
        const { terminalId } = await client.request(
          acp.methods.client.terminal.create,
          { sessionId, command: args.command, args: argv, cwd, outputByteLimit: OUTPUT_BYTE_LIMIT },
          options,
        );
        try {
          const exit = await client.request(
            acp.methods.client.terminal.waitForExit,
            { sessionId, terminalId },
            options,
          );
          const { output, truncated } = await client.request(
            acp.methods.client.terminal.output,
            { sessionId, terminalId },
            options,
          );
          const status = exit.signal ? `signal ${exit.signal}` : `exit ${exit.exitCode ?? "?"}`;
          return `${status}${truncated ? " (output cut)" : ""}\n${output}`;
        } finally {
          await client
            .request(acp.methods.client.terminal.release, { sessionId, terminalId })
            .catch(() => undefined);
        }
      },
    });
  return tools;
}

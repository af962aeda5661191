import { execFile } from "node:child_process";
import { Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { CLI } from "./cli.js";
import { type Child, spawnNode } from "./process.js";

/**
 * `hearth acp` as a real child process, driven by the SDK's own client side
 * (`client().connect(stream)`, the successor of ClientSideConnection) over
 * its stdin/stdout. Every session/update it sends is kept in `updates`.
 */
export class AcpChild {
  readonly process: Child;
  readonly updates: acp.SessionNotification[] = [];
  /** Every session/request_permission the agent sent. */
  readonly permissionRequests: acp.RequestPermissionRequest[] = [];
  /** How this editor answers them (by default: the request is cancelled). */
  answerPermission: (
    request: acp.RequestPermissionRequest,
  ) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse> = () => ({
    outcome: { outcome: "cancelled" },
  });
  readonly connection: acp.ClientConnection;
  /** The editor's files (fs/read_text_file and fs/write_text_file serve them), by absolute path. */
  readonly files = new Map<string, string>();
  /** Every fs/write_text_file the agent sent, in order. */
  readonly writes: { path: string; content: string }[] = [];
  /** Commands run through terminal/create (for real, by this test process), by terminal id. */
  readonly terminals = new Map<
    string,
    { argv: string[]; done: Promise<{ code: number; output: string }> }
  >();

  constructor(home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.process = spawnNode([CLI, "--home", home, "acp", ...args], { env });
    const encoder = new TextEncoder();
    const input = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.process.onLine((line) => controller.enqueue(encoder.encode(`${line}\n`)));
        void this.process.exited.then(() => controller.close());
      },
    });
    const output = Writable.toWeb(this.process.child.stdin) as WritableStream<Uint8Array>;
    this.connection = acp
      .client({ name: "hearth-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.permissionRequests.push(params);
        return this.answerPermission(params);
      })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        const content = this.files.get(params.path);
        if (content === undefined) throw acp.RequestError.resourceNotFound(params.path);
        return { content };
      })
      .onRequest(acp.methods.client.terminal.create, ({ params }) => {
        const terminalId = `t${this.terminals.size + 1}`;
        const argv = [params.command, ...(params.args ?? [])];
        const done = new Promise<{ code: number; output: string }>((resolve) => {
          execFile(
            params.command,
            params.args ?? [],
            { cwd: params.cwd ?? undefined },
            (err, out, errOut) =>
              resolve({
                code: typeof err?.code === "number" ? err.code : err ? 1 : 0,
                output: out + errOut,
              }),
          );
        });
        this.terminals.set(terminalId, { argv, done });
        return { terminalId };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => ({
        exitCode: (await this.terminals.get(params.terminalId)!.done).code,
      }))
      .onRequest(acp.methods.client.terminal.output, async ({ params }) => ({
        output: (await this.terminals.get(params.terminalId)!.done).output,
        truncated: false,
      }))
      .onRequest(acp.methods.client.terminal.release, () => ({}))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.writes.push({ path: params.path, content: params.content });
        this.files.set(params.path, params.content);
        return {};
      })
      .connect(acp.ndJsonStream(output, input));
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  async initialize(
    clientCapabilities: acp.ClientCapabilities = {},
  ): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
    });
  }

  /** A new session; `mcpServers` are the editor's own, connected for it alone. */
  async newSession(cwd = "/tmp/project", mcpServers: acp.McpServer[] = []): Promise<string> {
    return (await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers })).sessionId;
  }

  /** session/load (the transcript is replayed as updates) with the editor's `mcpServers`. */
  async loadSession(
    sessionId: string,
    cwd = "/tmp/project",
    mcpServers: acp.McpServer[] = [],
  ): Promise<void> {
    await this.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers });
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
  }

  /** The updates of one session, as [kind, text or id/status] pairs. */
  summary(sessionId: string): (string | undefined)[][] {
    return this.updates
      .filter((u) => u.sessionId === sessionId)
      .map(({ update: u }) => {
        if (u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk")
          return [u.sessionUpdate, u.content.type === "text" ? u.content.text : u.content.type];
        if (u.sessionUpdate === "tool_call") return [u.sessionUpdate, u.title, u.toolCallId];
        if (u.sessionUpdate === "tool_call_update")
          return [u.sessionUpdate, u.status ?? undefined, u.toolCallId];
        return [u.sessionUpdate];
      });
  }

  /** Close stdin (the editor going away) and wait for the exit. */
  async close() {
    this.process.child.stdin.end();
    return this.process.exited;
  }
}

/** Consecutive message chunks of the same kind joined: what a reader of the transcript sees. */
export function joined(summary: (string | undefined)[][]): (string | undefined)[][] {
  const out: (string | undefined)[][] = [];
  for (const item of summary) {
    const last = out[out.length - 1];
    if (last && last[0] === item[0] && item[0]?.endsWith("_message_chunk"))
      last[1] = `${last[1]}${item[1]}`;
    else out.push([...item]);
  }
  return out;
}

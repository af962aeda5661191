import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../../../config/tools.js";

/** What a started server offers: its tools as tools/list gave them. */
export interface Started {
  client: Client;
  tools: McpTool[];
}

/** The longest a failed start keeps the next attempt waiting. */
const MAX_BACKOFF_MS = 60_000;
/** How long close() waits for an HTTP server to acknowledge the end of its session. */
const TERMINATE_WAIT_MS = 1000;
/** A server's stderr line is logged up to this many characters. */
const MAX_STDERR_LINE = 2000;
/** tools/list pages read at most (a server that pages forever is cut off). */
const MAX_PAGES = 20;

/**
 * One MCP server for one profile, through the official SDK's Client. It
 * starts on first use (spawn or connect, initialize, tools/list, all within
 * `startTimeoutMs`), and a crash (the process exits, the connection drops)
 * only marks it stopped: the next use starts it again. A start that fails
 * makes the attempts after it fail at once for a while (1 s, doubling up to
 * a minute), so a dead server costs a turn nothing but an error result.
 */
export class McpConnection {
  private started: Promise<Started> | undefined;
  private live: { client: Client; transport: Transport } | undefined;
  private failures = 0;
  private failed: { error: Error; until: number } | undefined;
  private closed = false;
  /** How many times it was started (doctor, tests). */
  starts = 0;
  /** The tools its last start listed. */
  tools: McpTool[] | undefined;

  constructor(
    readonly profile: string,
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly onEvent: (event: string, fields: Record<string, unknown>) => void = () => {},
  ) {}

  /** The started server, starting it when it is not running. */
  ensure(): Promise<Started> {
    if (this.closed) return Promise.reject(new Error(`MCP server ${this.name} was stopped`));
    if (this.started) return this.started;
    if (this.failed && Date.now() < this.failed.until) return Promise.reject(this.failed.error);
    // Shared by every caller meanwhile, so no one caller's signal ends it; startTimeoutMs does.
    const attempt = this.start();
    this.started = attempt;
    attempt.then(
      () => {
        this.failures = 0;
        this.failed = undefined;
      },
      (err: Error) => {
        if (this.started === attempt) this.started = undefined;
        this.failures++;
        const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.failures - 1));
        this.failed = { error: err, until: Date.now() + wait };
        this.onEvent("mcp.start_failed", { err: err.message, retryInMs: wait });
      },
    );
    return attempt;
  }

  /** Call one tool (its MCP name); a result the server marks isError is thrown, as any tool's error. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const { client } = await this.ensure();
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.config.timeoutMs,
      })) as CallToolResult;
    } catch (err) {
      // A connection that failed under a call is not trusted with the next one.
      if (!signal.aborted && isConnectionLost(err)) await this.drop(client);
      throw err;
    }
  }

  /** Stop the server (its process, or its HTTP session); a later ensure() refuses. */
  async close(): Promise<void> {
    this.closed = true;
    const live = this.live;
    this.live = undefined;
    this.started = undefined;
    if (!live) return;
    // An HTTP server is told its session ends (bounded: a dead one does not hold the drain).
    const http = live.transport as { terminateSession?: () => Promise<void> };
    if (http.terminateSession)
      await Promise.race([
        http.terminateSession().catch(() => undefined),
        new Promise((r) => setTimeout(r, TERMINATE_WAIT_MS).unref()),
      ]);
    await closeQuietly(live.client);
  }

  /** The server's process id while a stdio server runs (tests, logs). */
  get pid(): number | undefined {
    const t = this.live?.transport as { pid?: number | null } | undefined;
    return t?.pid ?? undefined;
  }

  private async start(): Promise<Started> {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const transport = await this.transport();
    const client = new Client({ name: "hearth", version: "1" }, { capabilities: {} });
    this.starts++;
    // Bounded: a server that never answers initialize is cut off.
    const options = {
      timeout: this.config.startTimeoutMs,
      signal: AbortSignal.timeout(this.config.startTimeoutMs),
    };
    client.onclose = () => {
      // The process exited or the connection closed: the next use starts it again.
      if (this.live?.client !== client) return;
      this.live = undefined;
      this.started = undefined;
      if (!this.closed) this.onEvent("mcp.stopped", { pid: this.pidOf(transport) });
    };
    this.live = { client, transport };
    try {
      await client.connect(transport, options);
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const listed = await client.listTools(cursor ? { cursor } : undefined, options);
        tools.push(...listed.tools);
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      if (this.closed) throw new Error(`MCP server ${this.name} was stopped`);
      this.tools = tools;
      this.onEvent("mcp.started", { pid: this.pidOf(transport), tools: tools.length });
      return { client, tools };
    } catch (err) {
      if (this.live?.client === client) this.live = undefined;
      await closeQuietly(client);
      throw new Error(
        `MCP server ${this.name} did not start: ${(err as Error).message ?? String(err)}`,
        { cause: err },
      );
    }
  }

  private async transport(): Promise<Transport> {
    const c = this.config;
    if (c.command !== undefined) {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const transport = new StdioClientTransport({
        command: c.command,
        args: c.args,
        env: c.env,
        ...(c.cwd ? { cwd: c.cwd } : {}),
        stderr: "pipe",
      });
      // What it prints on stderr becomes log lines, so the process's own log stays JSON.
      let partial = "";
      transport.stderr?.on("data", (chunk: Buffer) => {
        const lines = (partial + chunk.toString("utf8")).split("\n");
        partial = lines.pop()!.slice(-MAX_STDERR_LINE);
        for (const line of lines)
          if (line.trim() !== "")
            this.onEvent("mcp.stderr", { line: line.slice(0, MAX_STDERR_LINE) });
      });
      return transport;
    }
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return new StreamableHTTPClientTransport(new URL(c.url!), {
      requestInit: { headers: c.headers },
    });
  }

  private async drop(client: Client): Promise<void> {
    if (this.live?.client !== client) return;
    this.live = undefined;
    this.started = undefined;
    await closeQuietly(client);
  }

  private pidOf(transport: Transport): number | undefined {
    return (transport as { pid?: number | null }).pid ?? undefined;
  }
}

/** The SDK's ConnectionClosed (-32000), or a transport error (fetch failed, EPIPE). */
function isConnectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (code === -32000) return true;
  return typeof code !== "number" && (err as Error)?.name !== "AbortError";
}

async function closeQuietly(client: Client): Promise<void> {
  try {
    await client.close();
  } catch {
    // Closing a server that is already gone has nothing left to report.
  }
}

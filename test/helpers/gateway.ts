import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { openStore, type Store } from "../../src/index.js";

// HEARTH_TEST_CLI runs these tests against another build of the CLI.
const CLI =
  process.env.HEARTH_TEST_CLI ?? fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const gateways = new Set<GatewayChild>();
const fakes = new Set<FakeOpenAi>();

export interface GatewayEvent {
  event?: string;
  pid?: number;
  address?: string;
  path?: string;
  profiles?: string[];
  signal?: string;
}

/** `hearth gateway run` as a real child process (port 0: a free port, read from the readiness line). */
export class GatewayChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  readonly events: GatewayEvent[] = [];
  stderr = "";
  address = "";
  path = "";
  /** Resolves on "close": every line the process printed has been read by then. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;

  constructor(home: string, options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {}) {
    const args = [CLI, "--home", home, "gateway", "run"];
    if (options.profiles) args.push("--profiles", options.profiles.join(","));
    this.child = spawn(process.execPath, args, {
      env: { ...process.env, ...options.env },
      stdio: "pipe",
    });
    this.pid = this.child.pid!;
    this.child.stderr.on("data", (d: Buffer) => {
      this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) =>
      this.child.once("close", (code, signal) => resolve({ code, signal })),
    );
    this.ready = new Promise<void>((resolve, reject) => {
      createInterface({ input: this.child.stdout }).on("line", (line) => {
        let event: GatewayEvent;
        try {
          event = JSON.parse(line) as GatewayEvent;
        } catch {
          return;
        }
        this.events.push(event);
        if (event.event === "gateway.ready") {
          this.address = event.address!;
          this.path = event.path!;
          resolve();
        }
      });
      void this.exited.then(({ code, signal }) =>
        reject(new Error(`gateway exited (${code ?? signal}) before ready\n${this.stderr}`)),
      );
    });
    this.ready.catch(() => undefined);
  }

  url(path: string): string {
    return `${this.address}${path}`;
  }

  /** POST /v1/messages with a JSON body (or a raw string); resolves with status and parsed body. */
  async post(body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const res = await fetch(this.url("/v1/messages"), {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as ApiBody };
  }

  async get(path: string): Promise<ApiResponse> {
    const res = await fetch(this.url(path));
    return { status: res.status, body: (await res.json()) as ApiBody };
  }

  /** Structured log lines (JSON on stderr) carrying this `event`. */
  logEvents(event: string): Record<string, unknown>[] {
    const complete = this.stderr.split("\n").slice(0, -1); // the last piece may be half a line
    return complete
      .filter((l) => l.includes(`"${event}"`))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.event === event);
  }

  async kill(
    signal: NodeJS.Signals = "SIGKILL",
  ): Promise<{ code: number | null; signal: string | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    const result = await this.exited;
    gateways.delete(this);
    return result;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
export type ApiBody = any;
export interface ApiResponse {
  status: number;
  body: ApiBody;
}

export function spawnGateway(
  home: string,
  options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {},
): GatewayChild {
  const gateway = new GatewayChild(home, options);
  gateways.add(gateway);
  return gateway;
}

/** Start a gateway and wait for its readiness line (never a sleep). */
export async function startGateway(
  home: string,
  options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<GatewayChild> {
  const gateway = spawnGateway(home, options);
  await gateway.ready;
  return gateway;
}

/** Write `<home>/config.json` (creating the home, 0700). */
export function writeConfig(home: string, config: Record<string, unknown>): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
}

/** Open the profile's store as a reader in this process, run `fn`, close it. */
export async function withStore<T>(
  home: string,
  fn: (store: Store) => Promise<T>,
  profile = "default",
): Promise<T> {
  const store = await openStore({ home, profile, role: "reader" });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Poll a real condition until it holds, failing after `ms`. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface SseEvent {
  event: string;
  data: ApiBody;
}

/** Read a whole text/event-stream body into its events, in order. */
export async function readSse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message";
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      return { event, data: JSON.parse(data) as ApiBody };
    });
}

/** The value of one Prometheus sample, e.g. metric(text, 'x_total{profile="default",role="user"}'). */
export function metric(text: string, sample: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

export interface FakeRequest {
  headers: IncomingHttpHeaders;
  body: { model?: string; stream?: boolean; messages?: { role: string; content: string }[] };
}

type FakeHandler = (req: FakeRequest, res: ServerResponse) => void | Promise<void>;

/** An OpenAI-compatible chat-completions endpoint on loopback, in this process. */
export class FakeOpenAi {
  readonly requests: FakeRequest[] = [];
  baseUrl = "";
  private readonly server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => {
      raw += d.toString();
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      const request = { headers: req.headers, body: JSON.parse(raw) as FakeRequest["body"] };
      this.requests.push(request);
      void Promise.resolve(this.handler(request, res)).catch(() => res.destroy());
    });
  });

  constructor(public handler: FakeHandler) {}

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export async function startFakeOpenAi(handler: FakeHandler): Promise<FakeOpenAi> {
  const fake = await new FakeOpenAi(handler).listen();
  fakes.add(fake);
  return fake;
}

/** A complete (non-streaming) chat-completions answer. */
export function answerJson(res: ServerResponse, content: string): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content } }] }));
}

/** A streamed answer: one `data:` chunk per piece, then optionally a final event, then [DONE]. */
export function answerStream(res: ServerResponse, pieces: string[], final?: unknown): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const content of pieces) {
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  }
  if (final !== undefined) res.write(`data: ${JSON.stringify(final)}\n\n`);
  res.end("data: [DONE]\n\n");
}

/** Kill every gateway still running and close every fake server (call in afterEach). */
export async function stopAll(): Promise<void> {
  await Promise.all([...gateways].map((g) => g.kill("SIGKILL")));
  await Promise.all([...fakes].map((f) => f.close()));
  fakes.clear();
}

import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { openStore, type Store } from "../../src/index.js";
import { CLI } from "./cli.js";
import type { Machine } from "./machine.js";
import { type Child, type Exit, spawnChild, spawnNode } from "./process.js";

const fakes = new Set<FakeOpenAi>();

export interface GatewayEvent {
  event?: string;
  pid?: number;
  address?: string;
  path?: string;
  profiles?: string[];
  signal?: string;
}

export interface GatewayOptions {
  profiles?: string[];
  env?: NodeJS.ProcessEnv;
  /** Run it as on another machine: this hostname and boot id (otherMachine()). */
  machine?: Machine;
}

/**
 * `hearth gateway run` as a real child process (port 0: a free port, read
 * from the readiness line). The one gateway starter of the test suite.
 */
export class GatewayChild {
  readonly process: Child;
  readonly pid: number;
  readonly events: GatewayEvent[] = [];
  address = "";
  path = "";
  /** Resolves on its `gateway.ready` line; rejects if it exits first. */
  readonly ready: Promise<void>;
  isReady = false;

  constructor(home: string, options: GatewayOptions = {}) {
    const args = [CLI, "--home", home, "gateway", "run"];
    if (options.profiles) args.push("--profiles", options.profiles.join(","));
    const env = options.env ? { env: options.env } : {};
    this.process = options.machine
      ? spawnChild("unshare", [...options.machine.unshare, process.execPath, ...args], env)
      : spawnNode(args, env);
    this.pid = this.process.pid;
    this.process.onLine((line) => {
      try {
        this.events.push(JSON.parse(line) as GatewayEvent);
      } catch {
        // not a JSON line
      }
    });
    this.ready = this.process
      .json<GatewayEvent>((e) => e.event === "gateway.ready", "gateway.ready")
      .then((event) => {
        this.address = event.address!;
        this.path = event.path!;
        this.isReady = true;
      });
    this.ready.catch(() => undefined);
  }

  get child() {
    return this.process.child;
  }

  get stderr(): string {
    return this.process.stderr;
  }

  /** Resolves on "close": every line the process printed has been read by then. */
  get exited(): Promise<Exit> {
    return this.process.exited;
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

  /** Send `signal` and wait for the exit. */
  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
    return this.process.kill(signal);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
export type ApiBody = any;
export interface ApiResponse {
  status: number;
  body: ApiBody;
}

/** Spawn a gateway without waiting for it (`ready` and `exited` tell what became of it). */
export function spawnGateway(home: string, options: GatewayOptions = {}): GatewayChild {
  return new GatewayChild(home, options);
}

/** Start a gateway and wait for its readiness line (never a sleep). */
export async function startGateway(
  home: string,
  options: GatewayOptions = {},
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

/** A session-title request of the gateway's (title-prompt.ts): non-streamed, with max_tokens. */
export function isTitleRequest(req: FakeRequest): boolean {
  const body = req.body as { max_tokens?: unknown; messages?: { content?: unknown }[] };
  const first = body.messages?.[0]?.content;
  return (
    body.max_tokens !== undefined &&
    typeof first === "string" &&
    first.startsWith("Write a short title")
  );
}

type FakeHandler = (req: FakeRequest, res: ServerResponse) => void | Promise<void>;

/** An OpenAI-compatible chat-completions endpoint on loopback, in this process. */
export class FakeOpenAi {
  readonly requests: FakeRequest[] = [];
  /** The session-title requests (src/turn/title-prompt.ts), answered by titleHandler. */
  readonly titleRequests: FakeRequest[] = [];
  titleHandler: FakeHandler = (_req, res) => answerJson(res, "Fake title");
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
      // The gateway's title requests (after a session's first exchange) have their own list
      // and handler, so tests counting turns see turns only.
      const title = isTitleRequest(request);
      (title ? this.titleRequests : this.requests).push(request);
      const handler = title ? this.titleHandler : this.handler;
      void Promise.resolve(handler(request, res)).catch(() => res.destroy());
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

/** A complete (non-streaming) chat-completions answer; `extra` adds top-level fields (usage, model). */
export function answerJson(
  res: ServerResponse,
  content: string,
  extra: Record<string, unknown> = {},
): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({ ...extra, choices: [{ index: 0, message: { role: "assistant", content } }] }),
  );
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

const piece = (content: string) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/**
 * A fake endpoint whose every turn streams `first`, then holds until the
 * test calls `release()` (the oldest held turn first), which streams `rest`
 * and ends it: a turn in the middle for exactly as long as the test acts
 * there, not for a fixed time. `responder` is the config that uses it.
 */
export async function heldModel(first = "word0 ", rest = "word1 word2") {
  const held: ServerResponse[] = [];
  const fake = await startFakeOpenAi((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(piece(first));
    held.push(res);
  });
  return {
    fake,
    content: first + rest,
    responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: true },
    release(): void {
      const res = held.shift();
      if (!res) throw new Error("no turn is held at the model");
      res.write(piece(rest));
      res.end("data: [DONE]\n\n");
    },
  };
}

/** Close every fake server (call in afterEach; setup.ts kills the gateways). */
export async function closeFakes(): Promise<void> {
  await Promise.all([...fakes].map((f) => f.close()));
  fakes.clear();
}

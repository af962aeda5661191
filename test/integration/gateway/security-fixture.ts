// Shared by the security tests (issue 11) against a real gateway:
// security-transport.test.ts (items 1-8) and security-auth.test.ts (items 11-17).
import { execFile, type spawn } from "node:child_process";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, expect } from "vitest";
import { closeFakes, type GatewayChild } from "../../helpers/gateway.js";
import { cleanupHomes } from "../../helpers/home.js";

export const CLI = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
export const HOLDER = fileURLToPath(
  new URL("../../fixtures/raw-write-holder.mjs", import.meta.url),
);
export const children = new Set<ReturnType<typeof spawn>>();

/** Each file that uses these helpers calls this once: kills its children and fakes after each test. */
export function cleanUpAfterEach(): void {
  afterEach(async () => {
    for (const c of children) c.kill("SIGKILL");
    children.clear();
    await closeFakes();
    cleanupHomes();
  });
}

export async function hearth(home: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [
      CLI,
      "--home",
      home,
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

export async function tokenCreate(home: string, profile = "default"): Promise<string> {
  const r = await hearth(home, "--profile", profile, "--json", "token", "create");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { code: string }).code;
}

export interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field
  body: any;
}

/** One HTTP request through node:http, so any Host or Origin header can be sent. */
export function raw(
  gw: GatewayChild,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Raw> {
  const url = new URL(gw.address);
  const payload =
    init.body === undefined
      ? undefined
      : typeof init.body === "string"
        ? init.body
        : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: init.method ?? (payload === undefined ? "GET" : "POST"),
        headers: {
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...init.headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A raw TCP connection to the gateway, collecting what the server sends until it closes. */
export class RawConnection {
  readonly socket: Socket;
  received = "";
  closed = false;
  readonly connected: Promise<void>;

  constructor(gw: GatewayChild) {
    const url = new URL(gw.address);
    this.socket = connect(Number(url.port), url.hostname);
    this.socket.setEncoding("utf8");
    this.socket.on("data", (d: string) => {
      this.received += d;
    });
    this.socket.on("error", () => undefined);
    this.socket.on("close", () => {
      this.closed = true;
    });
    this.connected = new Promise((resolve) => this.socket.once("connect", () => resolve()));
  }

  write(text: string): void {
    if (!this.closed) this.socket.write(text);
  }

  /** The JSON body of the response the server wrote before closing. */
  body(): { error?: { code?: string } } {
    const at = this.received.indexOf("\r\n\r\n");
    return JSON.parse(this.received.slice(at + 4));
  }
}

/** How a gateway that should refuse to start ended: its exit code, or "ready" if it started after all. */
export async function refusal(gw: GatewayChild): Promise<number | null | "ready"> {
  const ended = await Promise.race([
    gw.exited.then((e) => e.code),
    gw.ready.then(() => "ready" as const),
  ]);
  if (ended === "ready") await gw.kill();
  return ended;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

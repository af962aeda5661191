import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { runCli } from "./cli.js";
import { scope } from "./scope.js";

const CLI =
  process.env.HEARTH_TEST_CLI ?? fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
/** Dashboards a test started (killed after that test) and a file's beforeAll started (after the file): setup.ts. */
const children = new Set<DashboardChild>();
const fileChildren = new Set<DashboardChild>();

export interface DashboardEvent {
  event?: string;
  pid?: number;
  address?: string;
  login?: string;
  profiles?: string[];
  signal?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
export type Body = any;

/** `hearth dashboard run` as a real child process (port 0: a free port, read from the readiness line). */
export class DashboardChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  readonly events: DashboardEvent[] = [];
  stderr = "";
  address = "";
  login = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;

  constructor(home: string, options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {}) {
    const args = [CLI, "--home", home, "dashboard", "run"];
    if (options.profiles) args.push("--profiles", options.profiles.join(","));
    this.child = spawn(process.execPath, args, {
      env: { ...process.env, HEARTH_DASHBOARD_PORT: "0", ...options.env },
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
        let event: DashboardEvent;
        try {
          event = JSON.parse(line) as DashboardEvent;
        } catch {
          return;
        }
        this.events.push(event);
        if (event.event === "dashboard.ready") {
          this.address = event.address!;
          this.login = event.login!;
          resolve();
        }
      });
      void this.exited.then(({ code, signal }) =>
        reject(new Error(`dashboard exited (${code ?? signal}) before ready\n${this.stderr}`)),
      );
    });
    this.ready.catch(() => undefined);
  }

  url(path: string): string {
    return `${this.address}${path}`;
  }

  /** Follow a login link without following redirects: the browser session's cookie and its CSRF token. */
  async logIn(link = this.login): Promise<Browser> {
    const res = await fetch(link, { redirect: "manual" });
    if (res.status !== 303) throw new Error(`login answered ${res.status}`);
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
    const me = await fetch(this.url("/api/me"), { headers: { cookie } });
    const { csrfToken } = (await me.json()) as { csrfToken: string };
    return new Browser(this, cookie, csrfToken);
  }

  async kill(
    signal: NodeJS.Signals = "SIGKILL",
  ): Promise<{ code: number | null; signal: string | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    const result = await this.exited;
    children.delete(this);
    fileChildren.delete(this);
    return result;
  }
}

/** A logged-in client: sends the cookie, and on changes the CSRF token and the dashboard's own Origin. */
export class Browser {
  constructor(
    readonly dashboard: DashboardChild,
    readonly cookie: string,
    readonly csrf: string,
  ) {}

  async api(
    method: string,
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      csrf?: boolean;
      origin?: string | null;
    } = {},
  ): Promise<{ status: number; body: Body; headers: Headers }> {
    const headers: Record<string, string> = { cookie: this.cookie, ...options.headers };
    if (method !== "GET") {
      if (options.csrf !== false) headers["x-csrf-token"] = this.csrf;
      const origin = options.origin === undefined ? this.dashboard.address : options.origin;
      if (origin !== null) headers.origin = origin;
    }
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(this.dashboard.url(path), {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    let body: Body = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (an export, a page)
    }
    return { status: res.status, body, headers: res.headers };
  }
}

/** A raw HTTP GET with any Host header (fetch will not send a foreign one). */
export function getWithHost(
  address: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; bytes: Buffer; headers: Record<string, unknown> }> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method: "GET", headers: { ...headers, host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            body: bytes.toString(),
            bytes,
            headers: res.headers,
          });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Read Server-Sent Events from an open response as they arrive. */
export class SseReader {
  readonly events: { event: string; data: Body }[] = [];
  private readonly controller = new AbortController();
  done: Promise<void> = Promise.resolve();

  async open(url: string, cookie: string): Promise<number> {
    const res = await fetch(url, {
      headers: { cookie, accept: "text/event-stream" },
      signal: this.controller.signal,
    });
    if (!res.body) return res.status;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    this.done = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let cut = buffer.indexOf("\n\n");
          while (cut >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const lines = block.split("\n");
            const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
            const data = lines
              .filter((l) => l.startsWith("data: "))
              .map((l) => l.slice(6))
              .join("\n");
            if (event && data) this.events.push({ event, data: JSON.parse(data) });
            cut = buffer.indexOf("\n\n");
          }
        }
      } catch {
        // aborted or the server ended the stream
      }
    })();
    return res.status;
  }

  close(): void {
    this.controller.abort();
  }
}

export function spawnDashboard(
  home: string,
  options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {},
): DashboardChild {
  const d = new DashboardChild(home, options);
  (scope.inTest ? children : fileChildren).add(d);
  return d;
}

export async function startDashboard(
  home: string,
  options: { profiles?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<DashboardChild> {
  const d = spawnDashboard(home, options);
  await d.ready;
  return d;
}

/** A browser logged in with a pairing code of `profile` (hearth token create), of `scope`. */
export async function loginWithToken(
  dash: DashboardChild,
  home: string,
  profile: string,
  scope?: string,
): Promise<Browser> {
  const args = ["--profile", profile, "--json", "token", "create"];
  if (scope) args.push("--scope", scope);
  const created = await runCli(args, { home });
  if (created.code !== 0) throw new Error(`token create exited ${created.code}: ${created.stderr}`);
  const { code } = created.json<{ code: string }>();
  return dash.logIn(dash.url(`/login?token=${code}`));
}

/** Kill every dashboard still running, a file's too. */
export async function stopDashboards(): Promise<void> {
  await Promise.all([...children, ...fileChildren].map((d) => d.kill("SIGKILL")));
}

/**
 * Kill the dashboards this test started (setup.ts, after each test). A file
 * that forgot its own afterEach left a `dashboard run` child alive after the
 * whole suite, reparented to init (services-supervised.test.ts did).
 */
export async function killTestDashboards(): Promise<void> {
  await Promise.all([...children].map((d) => d.kill("SIGKILL")));
}

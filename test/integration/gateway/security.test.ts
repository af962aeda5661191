import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import {
  closeFakes,
  type GatewayChild,
  spawnGateway,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const CLI = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
const HOLDER = fileURLToPath(new URL("../../fixtures/raw-write-holder.mjs", import.meta.url));
const children = new Set<ReturnType<typeof spawn>>();

afterEach(async () => {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
  await closeFakes();
  cleanupHomes();
});

async function hearth(home: string, ...args: string[]) {
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

async function tokenCreate(home: string, profile = "default"): Promise<string> {
  const r = await hearth(home, "--profile", profile, "--json", "token", "create");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { code: string }).code;
}

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field
  body: any;
}

/** One HTTP request through node:http, so any Host or Origin header can be sent. */
function raw(
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
class RawConnection {
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
async function refusal(gw: GatewayChild): Promise<number | null | "ready"> {
  const ended = await Promise.race([
    gw.exited.then((e) => e.code),
    gw.ready.then(() => "ready" as const),
  ]);
  if (ended === "ready") await gw.kill();
  return ended;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("security (issue 11) against a real gateway", () => {
  it("scopes a request to exactly one profile: a token paired for b writes only into b (item 1)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { requireAuth: true } });
    const gw = await startGateway(home, { profiles: ["default", "b"] });
    const code = await tokenCreate(home, "b");
    const paired = await raw(gw, "/v1/auth/pair", { body: { code, profile: "b" } });
    expect(paired.status).toBe(200);
    const auth = { authorization: `Bearer ${paired.body.accessToken}` };
    const message = { platform: "p", chat: "c", content: "for b only" };

    const written = await raw(gw, "/v1/messages?profile=b", { headers: auth, body: message });
    expect(written.status).toBe(200);
    expect(written.body.profile).toBe("b");
    expect(await withStore(home, (s) => s.sessions.list({}), "b")).toMatchObject({
      items: [expect.objectContaining({ source: "p", chatKey: "c" })],
    });
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);

    // The token is good for b only: default, named or implied, is refused.
    for (const path of ["/v1/messages?profile=default", "/v1/messages"]) {
      const other = await raw(gw, path, { headers: auth, body: message });
      expect(other.status).toBe(401);
    }
    const viaBody = await raw(gw, "/v1/messages", {
      headers: auth,
      body: { ...message, profile: "default" },
    });
    expect(viaBody.status).toBe(401);
    // Query and body must agree.
    const split = await raw(gw, "/v1/messages?profile=b", {
      headers: auth,
      body: { ...message, profile: "default" },
    });
    expect(split.status).toBe(400);
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);
    expect((await raw(gw, "/v1/sessions?profile=b", { headers: auth })).body.items).toHaveLength(1);
  });

  it("refuses a Host that is not loopback, the bound address or gateway.allowedHosts (item 2, DNS rebinding)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, allowedHosts: ["agent.example", ".lan.example"] } });
    const gw = await startGateway(home);
    const port = new URL(gw.address).port;
    const message = { platform: "p", chat: "c", content: "hi" };

    for (const host of [
      "evil.example",
      `evil.example:${port}`,
      "127.0.0.1.evil.example",
      "agent.example.evil",
    ]) {
      const read = await raw(gw, "/v1/sessions", { headers: { host } });
      expect(read.status, host).toBe(403);
      expect(read.body.error.code).toBe("HEARTH_HOST_NOT_ALLOWED");
      const write = await raw(gw, "/v1/messages", { headers: { host }, body: message });
      expect(write.status, host).toBe(403);
    }
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);

    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      "127.0.0.2",
      "agent.example",
      `AGENT.example:${port}`,
      "box.lan.example",
    ]) {
      expect((await raw(gw, "/v1/sessions", { headers: { host } })).status, host).toBe(200);
    }
    // A good Host answered just before does not let a bad one through.
    expect((await raw(gw, "/v1/sessions", { headers: { host: "evil.example" } })).status).toBe(403);
    // A page of another origin is refused even with a good Host.
    const page = await raw(gw, "/v1/messages", {
      headers: { origin: "http://evil.example" },
      body: message,
    });
    expect(page.status).toBe(403);
    expect(page.body.error.code).toBe("HEARTH_HOST_NOT_ALLOWED");
    expect((await raw(gw, "/v1/sessions", { headers: { origin: "null" } })).status).toBe(403);
    expect(
      (await raw(gw, "/v1/sessions", { headers: { origin: `http://localhost:${port}` } })).status,
    ).toBe(200);
  });

  it("closes a connection whose body trickles past gateway.requestTimeoutMs, and health keeps answering (item 3)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requestTimeoutMs: 1000 } });
    const gw = await startGateway(home);
    const conn = new RawConnection(gw);
    await conn.connected;
    conn.write(
      "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    );
    // One byte every 200 ms: never idle long enough for an idle timeout, so only a body deadline ends it.
    for (let i = 0; i < 50 && !conn.closed; i++) {
      await sleep(200);
      conn.write(" ");
    }
    expect(conn.closed).toBe(true);
    expect(conn.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(conn.body().error?.code).toBe("HEARTH_REQUEST_TIMEOUT");
    expect((await raw(gw, "/v1/health")).status).toBe(200);
  });

  it("drops connections beyond gateway.maxConnections (item 3)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, maxConnections: 3 } });
    const gw = await startGateway(home);
    const held = [new RawConnection(gw), new RawConnection(gw), new RawConnection(gw)];
    await Promise.all(held.map((c) => c.connected));
    // Each has started a request the server is waiting on: the server has accepted all three.
    for (const c of held) c.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await sleep(100);
    const extra = new RawConnection(gw);
    await until("the connection beyond the cap is closed", () => extra.closed, 5_000);
    expect(held.map((c) => c.closed)).toEqual([false, false, false]);
    for (const c of held) c.socket.destroy();
    await until(
      "health answers once the stalled connections are gone",
      async () => (await raw(gw, "/v1/health").catch(() => ({ status: 0 }))).status === 200,
    );
  });

  it("authenticates before reading or validating the body (items 3 and 13)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home);
    const conn = new RawConnection(gw);
    await conn.connected;
    // Headers announce a body that never comes: the 401 must not wait for it.
    conn.write(
      "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
    );
    await until("an answer before the body", () => conn.received.includes("\r\n\r\n"), 5_000);
    expect(conn.received).toMatch(/^HTTP\/1\.1 401 /);
    conn.socket.destroy();
    // A bad body without a token is a 401, not a validation 400.
    const bad = await raw(gw, "/v1/messages", { body: { nonsense: true } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe("HEARTH_UNAUTHORIZED");
  });

  it("refuses to listen beyond loopback without auth, before opening any store (item 4)", async () => {
    for (const host of ["0.0.0.0", "::", "192.0.2.1"]) {
      const home = tempHome();
      writeConfig(home, { gateway: { port: 0, host } });
      const gw = spawnGateway(home);
      expect(await refusal(gw), host).toBe(78);
      expect(gw.stderr).toContain(`refusing to serve on ${host} without authentication`);
      expect(gw.stderr).toContain("requireAuth");
      expect(gw.events).toEqual([]);
      expect(existsSync(join(home, "state.db"))).toBe(false);
    }
    // The environment override is held to the same rule.
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = spawnGateway(home, { env: { HEARTH_GATEWAY_HOST: "0.0.0.0" } });
    expect(await refusal(gw)).toBe(78);
    expect(gw.stderr).toContain("refusing to serve on 0.0.0.0");
  });

  it("a SIGHUP that would turn auth off beyond loopback is refused; the old configuration stays (item 4)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, host: "0.0.0.0", requireAuth: true } });
    const gw = await startGateway(home);
    const message = { platform: "p", chat: "c", content: "no token" };
    expect((await raw(gw, "/v1/messages", { body: message })).status).toBe(401);

    writeConfig(home, { gateway: { port: 0, host: "0.0.0.0", requireAuth: false } });
    gw.child.kill("SIGHUP");
    await until("the reload refused", () => gw.logEvents("gateway.reload_failed").length === 1);
    expect(JSON.stringify(gw.logEvents("gateway.reload_failed"))).toContain(
      "without authentication",
    );
    expect(gw.logEvents("gateway.reloaded")).toEqual([]);
    // Still bound to every address, still asking for a token; nothing was written.
    expect((await raw(gw, "/v1/messages", { body: message })).status).toBe(401);
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);
  });

  it("gives HTTP clients no paths or command lines in a 503, and Retry-After (item 7)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 }, store: { busyTimeoutMs: 300 } });
    const gw = await startGateway(home);
    const holder = spawn(process.execPath, [HOLDER, gw.path, "forever"], { stdio: "pipe" });
    children.add(holder);
    const lines = createInterface({ input: holder.stdout! })[Symbol.asyncIterator]();
    expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ locked: true });
    const busy = await raw(gw, "/v1/messages", {
      body: { platform: "p", chat: "c", content: "x" },
    });
    holder.stdin!.write("release\n");
    expect(busy.status).toBe(503);
    expect(busy.body.error.code).toBe("HEARTH_BUSY");
    expect(busy.headers["retry-after"]).toBe("1");
    expect(busy.text).not.toContain(home);
    expect(busy.text).not.toContain("state.db");
    expect(busy.text).not.toContain("raw-write-holder");
    expect(busy.text).not.toContain(String(holder.pid));
    expect(busy.body.error.details).toBeUndefined();
    // The operator still gets the whole story in the log.
    await until("the failure is logged", () => gw.stderr.includes("request failed"));
    expect(gw.stderr).toContain(gw.path);
  });

  it("never relays an upstream error body, and refuses a baseUrl with user info (item 8)", async () => {
    const secret = "sk-test-DO-NOT-LEAK-0123456789";
    const fake = await startFakeOpenAi((req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: { message: `bad key: ${req.headers.authorization}`, code: "invalid_api_key" },
        }),
      );
    });
    const home = tempHome();
    writeConfig(home, {
      gateway: {
        port: 0,
        responder: {
          kind: "openai",
          baseUrl: fake.baseUrl,
          model: "m",
          stream: false,
          apiKeyEnv: "HEARTH_TEST_API_KEY",
        },
      },
    });
    const gw = await startGateway(home, { env: { HEARTH_TEST_API_KEY: secret } });
    const failed = await raw(gw, "/v1/messages", {
      body: { platform: "p", chat: "c", content: "x" },
    });
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe("HEARTH_RESPONDER_FAILED");
    expect(failed.body.error.message).toContain("401");
    expect(failed.body.error.message).toContain("invalid_api_key");
    expect(failed.text).not.toContain(secret);
    const stored = await withStore(home, async (s) => {
      const [session] = (await s.sessions.list({})).items;
      return JSON.stringify(await s.messages.load(session!.id));
    });
    expect(stored).toContain("hearth.turn_failed");
    expect(stored).not.toContain(secret);
    await gw.kill("SIGTERM");
    expect(gw.stderr).toContain("invalid_api_key");
    expect(gw.stderr).not.toContain(secret);

    const withUser = tempHome();
    writeConfig(withUser, {
      gateway: {
        port: 0,
        responder: { kind: "openai", baseUrl: "http://user:hunter2@127.0.0.1:9/v1", model: "m" },
      },
    });
    const refused = spawnGateway(withUser);
    expect(await refusal(refused)).toBe(78);
    expect(refused.stderr).toContain("user name or password");
    expect(refused.stderr).not.toContain("hunter2");
  });

  it("answers framework-level errors in the documented shape (item 11)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const cases: [string, number, string][] = [
      [
        `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
        431,
        "HEARTH_HEADERS_TOO_LARGE",
      ],
      [
        `GET /v1/sessions?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
        431,
        "HEARTH_HEADERS_TOO_LARGE",
      ],
      [
        `GET /v1/sessions/${"a".repeat(500)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        414,
        "HEARTH_URL_TOO_LONG",
      ],
      [
        "GET /v1/sessions/%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        400,
        "HEARTH_BAD_REQUEST",
      ],
      ["FOO /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "HEARTH_BAD_REQUEST"],
      ["GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n", 403, "HEARTH_HOST_NOT_ALLOWED"],
      [
        "PROPFIND /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        404,
        "HEARTH_NOT_FOUND",
      ],
    ];
    for (const [request, status, code] of cases) {
      const conn = new RawConnection(gw);
      await conn.connected;
      conn.write(request);
      await until(`an answer to ${request.slice(0, 30)}`, () => conn.closed, 5_000);
      expect(conn.received.slice(0, 12), request.slice(0, 30)).toBe(`HTTP/1.1 ${status}`);
      expect(conn.body().error?.code, request.slice(0, 30)).toBe(code);
    }
  });

  it("logs failed authentication without the secret and rate-limits pair and refresh per address (item 12)", async () => {
    const home = tempHome();
    writeConfig(home, {
      gateway: { port: 0, requireAuth: true, authRateLimit: { burst: 3, perMinute: 1 } },
    });
    const gw = await startGateway(home);
    const guesses = ["GUESSAAAA1", "GUESSAAAA2", "GUESSAAAA3", "GUESSAAAA4", "GUESSAAAA5"];
    const answers = [];
    for (const code of guesses) answers.push(await raw(gw, "/v1/auth/pair", { body: { code } }));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429, 429]);
    expect(answers[3]!.body.error.code).toBe("HEARTH_RATE_LIMITED");
    expect(Number(answers[3]!.headers["retry-after"])).toBeGreaterThan(0);
    const refresh = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: "hrt_guess" } });
    expect(refresh.status).toBe(429);
    // A real code is refused too while the address is over the limit.
    const code = await tokenCreate(home);
    expect((await raw(gw, "/v1/auth/pair", { body: { code } })).status).toBe(429);

    expect(
      (
        await raw(gw, "/v1/sessions", {
          headers: { authorization: "Bearer hat_forged_token_value" },
        })
      ).status,
    ).toBe(401);
    await until("the failures are logged", () => gw.logEvents("auth.failed").length >= 4);
    const failures = gw.logEvents("auth.failed");
    expect(failures[0]).toMatchObject({ route: "/v1/auth/pair", ip: "127.0.0.1" });
    expect(failures.at(-1)).toMatchObject({ route: "/v1/sessions" });
    for (const secret of [...guesses, "hat_forged_token_value"])
      expect(gw.stderr).not.toContain(secret);
    expect(gw.logEvents("auth.rate_limited").length).toBeGreaterThanOrEqual(3);
  });

  it("tells unauthenticated callers nothing about the served profiles; /metrics needs a token unless public (item 13)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true } });
    const gw = await startGateway(home, { profiles: ["default", "secretproject"] });
    const health = await raw(gw, "/v1/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    const answers = [
      await raw(gw, "/v1/sessions?profile=nope"),
      await raw(gw, "/v1/auth/pair", { body: { code: "ABCDEFGHJK", profile: "nope" } }),
      await raw(gw, "/v1/auth/refresh?profile=nope", { body: { refreshToken: "hrt_x" } }),
      await raw(gw, "/metrics"),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    for (const a of answers) expect(a.text).not.toContain("secretproject");

    // With a token, health says more, and a 404 may list what is served.
    const code = await tokenCreate(home);
    const pair = (await raw(gw, "/v1/auth/pair", { body: { code } })).body;
    const auth = { authorization: `Bearer ${pair.accessToken}` };
    expect((await raw(gw, "/v1/health", { headers: auth })).body.profiles).toEqual([
      "default",
      "secretproject",
    ]);
    expect((await raw(gw, "/metrics", { headers: auth })).status).toBe(200);
    await gw.kill("SIGTERM");

    writeConfig(home, { gateway: { port: 0, requireAuth: true, publicMetrics: true } });
    const open = await startGateway(home);
    expect((await raw(open, "/metrics")).status).toBe(200);
  });

  it("bounds profile names in query strings and auth bodies and never echoes a long one (item 14)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const long = "a".repeat(100_000);
    const answers = [
      await raw(gw, `/v1/sessions?profile=${"a".repeat(8_000)}`),
      await raw(gw, `/v1/handoffs?profile=${"b".repeat(65)}`),
      await raw(gw, "/v1/auth/pair", { body: { code: "ABCDEFGHJK", profile: long } }),
      await raw(gw, "/v1/auth/refresh", { body: { refreshToken: "hrt_x", profile: long } }),
      await raw(gw, "/v1/messages", {
        body: { platform: "p", chat: "c", content: "x", profile: long },
      }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body.error.code).toBe("HEARTH_BAD_REQUEST");
      expect(a.text.length).toBeLessThan(1_000);
    }
  });

  it("refuses lone surrogates and control characters in names; what is acknowledged is what is stored (item 15)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const bodies = [
      '{"platform":"p","chat":"c","content":"half \\ud83d a smile"}',
      '{"platform":"p","chat":"c","content":"\\udc00"}',
      '{"platform":"p\\u0000","chat":"c","content":"x"}',
      '{"platform":"p","chat":"c\\u0000d","content":"x"}',
      '{"platform":"p","chat":"c\\u001b[2J","content":"x"}',
      '{"platform":"p\\ud800","chat":"c","content":"x"}',
    ];
    for (const body of bodies) {
      const r = await raw(gw, "/v1/messages", { body });
      expect(r.status, body).toBe(400);
      expect(r.body.error.code).toBe("HEARTH_BAD_REQUEST");
    }
    expect((await withStore(home, (s) => s.sessions.list({}))).items).toEqual([]);

    const content = "pair 😀, NUL \u0000 inside, tab\tand\nnewline";
    const ok = await raw(gw, "/v1/messages", { body: { platform: "p", chat: "c", content } });
    expect(ok.status).toBe(200);
    expect(ok.body.message.content).toBe(content);
    const stored = await withStore(home, (s) => s.messages.load(ok.body.session.id));
    expect(stored[0]!.content).toBe(content);
  });

  it("answers 401 to a refresh within the grace window once the family was revoked (item 16)", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, requireAuth: true, refreshGraceMs: 60_000 } });
    const gw = await startGateway(home);
    const code = await tokenCreate(home);
    const p0 = (await raw(gw, "/v1/auth/pair", { body: { code } })).body;
    const p1 = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } });
    expect(p1.status).toBe(200);
    // Within the grace window the same token still gets the same pair…
    expect(
      (await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } })).body,
    ).toEqual(p1.body);
    expect((await hearth(home, "token", "revoke", p0.familyId)).code).toBe(0);
    // …but not once the family is revoked.
    const late = await raw(gw, "/v1/auth/refresh", { body: { refreshToken: p0.refreshToken } });
    expect(late.status).toBe(401);
    expect(late.body.error.code).toBe("HEARTH_UNAUTHORIZED");
    expect(late.text).not.toContain(p1.body.accessToken);
  });

  it("validates every profile name before opening any store (item 17)", async () => {
    const home = tempHome();
    const r = await hearth(home, "gateway", "run", "--profiles", "ok,../../etc");
    expect(r.code).toBe(78); // a refusal a restart cannot fix
    expect(r.stderr).toContain("../../etc");
    expect(existsSync(join(home, "profiles", "ok", "state.db"))).toBe(false);
    expect(existsSync(join(home, "profiles", "ok"))).toBe(false);
  });
});

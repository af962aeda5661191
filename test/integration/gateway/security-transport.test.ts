import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import {
  spawnGateway,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import {
  children,
  cleanUpAfterEach,
  HOLDER,
  RawConnection,
  raw,
  refusal,
  sleep,
  tokenCreate,
} from "./security-fixture.js";

cleanUpAfterEach();

describe("security (issue 11) against a real gateway: scope, hosts, connections and upstreams (items 1-8)", () => {
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

    // The token is good for b only: default, named or implied, is refused
    // as another profile's token (403), not as an unknown one (401).
    for (const path of ["/v1/messages?profile=default", "/v1/messages"]) {
      const other = await raw(gw, path, { headers: auth, body: message });
      expect([other.status, other.body.error.code]).toEqual([403, "HEARTH_PROFILE_DENIED"]);
    }
    const viaBody = await raw(gw, "/v1/messages", {
      headers: auth,
      body: { ...message, profile: "default" },
    });
    expect([viaBody.status, viaBody.body.error.code]).toEqual([403, "HEARTH_PROFILE_DENIED"]);
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
});

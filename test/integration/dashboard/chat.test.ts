import { beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { type Browser, type DashboardChild, startDashboard } from "../../helpers/dashboard.js";
import {
  type GatewayChild,
  type SseEvent,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

// setup.ts stops the dashboards and gateways a test started after it, and
// what a beforeAll started after the file, then removes their homes.

/** POST /api/chat as a logged-in page does, and read its server-sent events to the end. */
async function chat(
  browser: Browser,
  body: Record<string, unknown>,
  options: { csrf?: boolean; origin?: string | null } = {},
): Promise<{ status: number; events: SseEvent[]; body: unknown }> {
  const headers: Record<string, string> = {
    cookie: browser.cookie,
    "content-type": "application/json",
    accept: "text/event-stream",
  };
  if (options.csrf !== false) headers["x-csrf-token"] = browser.csrf;
  const origin = options.origin === undefined ? browser.dashboard.address : options.origin;
  if (origin !== null) headers.origin = origin;
  const res = await fetch(browser.dashboard.url("/api/chat"), {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    return { status: res.status, events: [], body: JSON.parse(text) };
  }
  const events = text
    .split("\n\n")
    .filter((b) => b.includes("data: "))
    .map((block) => {
      const lines = block.split("\n");
      return {
        event: lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message",
        data: JSON.parse(
          lines
            .filter((l) => l.startsWith("data: "))
            .map((l) => l.slice(6))
            .join("\n"),
        ),
      } as SseEvent;
    });
  return { status: res.status, events, body: null };
}

const messageCount = (home: string) => withStore(home, async (s) => (await s.counts()).messages);

describe("dashboard chat (through the gateway)", () => {
  // Three tests that each write their own session (or nothing) share one
  // home, gateway and dashboard: none needs a fresh process.
  describe("one home, gateway and dashboard", () => {
    let home: string;
    let gw: GatewayChild;
    let dash: DashboardChild;
    let browser: Browser;
    beforeAll(async () => {
      home = tempHome();
      gw = await startGateway(home);
      dash = await startDashboard(home);
      browser = await dash.logIn();
    });

    it("relays a new conversation to the gateway and streams stored, deltas and the reply", async () => {
      const r = await chat(browser, { profile: "default", content: "hello from the page" });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const kinds = r.events.map((e) => e.event);
      expect(kinds[0]).toBe("stored");
      expect(kinds.at(-1)).toBe("reply");
      expect(kinds.filter((k) => k === "delta").length).toBeGreaterThan(0);
      const deltas = r.events
        .filter((e) => e.event === "delta")
        .map((e) => (e.data as { text: string }).text)
        .join("");
      const reply = r.events.at(-1)!.data as {
        session: { id: string; source: string };
        reply: { content: string };
      };
      expect(reply.reply.content).toBe("echo: hello from the page");
      expect(deltas).toBe(reply.reply.content);
      expect(reply.session.source).toBe("dashboard");
      await withStore(home, async (s) => {
        const loaded = await s.messages.load(reply.session.id);
        expect(loaded.map((m) => m.content)).toEqual([
          "hello from the page",
          "echo: hello from the page",
        ]);
      });
    });

    it("continues an existing session through its platform and chat", async () => {
      const sid = (await gw.post({ platform: "telegram", chat: "42", content: "first" })).body
        .session.id as string;
      const r = await chat(browser, { profile: "default", sessionId: sid, content: "second" });
      expect(r.events.at(-1)!.event).toBe("reply");
      expect((r.events.at(-1)!.data as { session: { id: string } }).session.id).toBe(sid);
      await withStore(home, async (s) =>
        expect((await s.messages.load(sid)).map((m) => m.content)).toEqual([
          "first",
          "echo: first",
          "second",
          "echo: second",
        ]),
      );
    });

    it("refuses a chat message without the CSRF token or from a foreign Origin, and nothing reaches the gateway", async () => {
      const before = await messageCount(home);
      const noToken = await chat(
        browser,
        { profile: "default", content: "forged" },
        { csrf: false },
      );
      expect(noToken.status).toBe(403);
      expect((noToken.body as { error: { code: string } }).error.code).toBe("HEARTH_CSRF_REJECTED");
      const foreign = await chat(
        browser,
        { profile: "default", content: "forged" },
        { origin: "http://evil.example" },
      );
      expect(foreign.status).toBe(403);
      const noOrigin = await chat(
        browser,
        { profile: "default", content: "forged" },
        { origin: null },
      );
      expect(noOrigin.status).toBe(403);
      const anonymous = await fetch(dash.url("/api/chat"), {
        method: "POST",
        headers: { "content-type": "application/json", origin: dash.address },
        body: JSON.stringify({ profile: "default", content: "forged" }),
      });
      expect(anonymous.status).toBe(401);
      expect(await messageCount(home)).toBe(before);
    });
  });

  it("says HEARTH_GATEWAY_UNREACHABLE when no gateway runs, even with a stale record after kill -9", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    await gw.kill("SIGKILL"); // its run/gateway.json stays behind, naming a dead process
    const r = await chat(browser, { profile: "default", content: "anyone?" });
    expect(r.status).toBe(502);
    expect((r.body as { error: { code: string; hint: string } }).error).toMatchObject({
      code: "HEARTH_GATEWAY_UNREACHABLE",
      hint: "hearth --profile default gateway run",
    });
    // A new gateway is found at once, on its new address.
    await startGateway(home);
    const again = await chat(browser, { profile: "default", content: "now?" });
    expect(again.events.at(-1)!.event).toBe("reply");
  });

  it("pairs its own token family when the gateway requires tokens", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { requireAuth: true } });
    const gw = await startGateway(home);
    expect((await gw.post({ platform: "web", chat: "x", content: "no token" })).status).toBe(401);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const r = await chat(browser, { profile: "default", content: "with the dashboard's token" });
    expect(r.events.at(-1)!.event).toBe("reply");
    const families = await withStore(home, (s) => s.tokens.families());
    expect(families.some((f) => (f.label ?? "").startsWith("dashboard chat"))).toBe(true);
  });
});

describe("dashboard health history", () => {
  it("charts the samples the gateway writes: file sizes and messages stored per day", async () => {
    const home = tempHome();
    writeConfig(home, { maintenance: { healthSampleMs: 1000 } });
    const gw = await startGateway(home);
    for (let i = 0; i < 5; i++) await gw.post({ platform: "web", chat: "h", content: `m${i}` });
    // The gateway samples at start and every healthSampleMs: wait for one that saw the 10 messages.
    const store = await openStore({ home, role: "reader" });
    try {
      await expect
        .poll(async () => (await store.stats.latest())?.lastMessageId ?? 0, { timeout: 10_000 })
        .toBe(10);
    } finally {
      await store.close();
    }
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const r = await browser.api("GET", "/api/health/history?days=7");
    expect(r.status).toBe(200);
    const [p] = r.body.profiles;
    expect(p.profile).toBe("default");
    expect(p.samples.length).toBeGreaterThanOrEqual(2);
    expect(p.samples.at(-1).databaseBytes).toBeGreaterThan(0);
    expect(p.days).toHaveLength(1);
    // Messages stored that day: what the latest sample saw minus what the first one (at start) saw.
    expect(p.days[0].messages).toBe(10 - p.samples[0].lastMessageId);
  });
});

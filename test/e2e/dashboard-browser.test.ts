import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databasePath } from "../../src/index.js";
import { axeViolations, doctorReported, launchBrowser, screenshotDir } from "../helpers/browser.js";
import { type DashboardChild, startDashboard, stopDashboards } from "../helpers/dashboard.js";
import { type GatewayChild, startGateway, withStore } from "../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../helpers/home.js";
import { until } from "../helpers/process.js";

// HEARTH_SCREENSHOTS=1 writes the screenshots into docs/img (the README's); otherwise none are taken.
const shots = screenshotDir();
const HOSTILE_SCRIPT = "<script>window.__pwned = 'script'</script> look at this";
const HOSTILE_IMG = `<img src=x onerror="window.__pwned='img'"> and this`;
/** Markdown that tries to become script, a dangerous link, an image or raw HTML (issue 47). */
const HOSTILE_MARKDOWN = [
  "[click me](javascript:window.__pwned='md-link')",
  "[tab](java\tscript:window.__pwned='md-tab')",
  "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "[vb](vbscript:msgbox(1))",
  "<javascript:window.__pwned='autolink'>",
  `![pic](x" onerror="window.__pwned='md-img')`,
  `<a href="javascript:window.__pwned='raw-a'">raw anchor</a>`,
  `<iframe src="javascript:window.__pwned='iframe'"></iframe>`,
  "[fine](https://example.com/docs)",
  "```html\n</code></pre><script>window.__pwned='fence'</script>\n```",
].join("\n\n");
const MARKDOWN = "A list:\n\n- one\n- two\n\n```js\nconst answer = 42;\n```\n\nand `inline`.";

let home: string;
let gw: GatewayChild;
let dash: DashboardChild;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let tripId: string;
let mdId: string;
let evilId: string;

/** Real headless Chromium (Debian's, else npm's: helpers/browser.ts), a fresh profile, no network beyond loopback. */
beforeAll(async () => {
  home = tempHome();
  gw = await startGateway(home);
  tripId = (
    await gw.post({ platform: "telegram", chat: "trip", content: "Plan a weekend in Lisbon" })
  ).body.session.id;
  await gw.post({ platform: "telegram", chat: "trip", content: "Which museums open on Monday?" });
  await gw.post({ platform: "slack", chat: "ops", content: "Nightly backup report" });
  evilId = (await gw.post({ platform: "web", chat: "evil", content: HOSTILE_SCRIPT })).body.session
    .id;
  await gw.post({ platform: "web", chat: "evil", content: HOSTILE_IMG });
  mdId = (await gw.post({ platform: "web", chat: "md", content: HOSTILE_MARKDOWN })).body.session
    .id;
  await gw.post({ platform: "web", chat: "md", content: MARKDOWN });
  // Health samples of the past 29 days (the gateway adds today's): the chart's history,
  // which a test cannot wait for. Raw rows in the schema-4 table, as the samplers write them.
  const raw = new Database(databasePath(home, "default"));
  try {
    const insert = raw.prepare(
      "INSERT INTO health_samples (at, database_bytes, wal_bytes, last_message_id) VALUES (?, ?, ?, ?)",
    );
    const day = 86_400_000;
    for (let d = 29; d >= 1; d--) {
      const at = Date.now() - d * day;
      insert.run(
        at,
        1_000_000 + (29 - d) * 55_000,
        300_000 + ((d * 7919) % 9) * 400_000,
        (29 - d) * 310 + ((d * 31) % 7) * 40,
      );
    }
  } finally {
    raw.close();
  }
  dash = await startDashboard(home);
  browser = await launchBrowser();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  shots.cleanup();
  await stopDashboards();
  cleanupHomes();
});

const axeSerious = () => axeViolations(page);

describe("dashboard in a real browser", () => {
  it("logs in through the one-time link and lists the sessions", async () => {
    await page.goto(dash.login);
    await page.waitForURL(`${dash.address}/`);
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.locator("ul.sessions li").first().waitFor();
    expect(await page.locator("ul.sessions li").count()).toBe(4);
    await expect.poll(() => page.locator(".live").textContent()).toBe("Live");
    expect(await axeSerious()).toEqual([]);
    await shots.shoot(page, "dashboard-sessions.png");
  });

  it("filters by platform and opens a transcript", async () => {
    await page.getByLabel("Platform").selectOption("slack");
    await expect.poll(() => page.locator("ul.sessions li").count()).toBe(1);
    await page.getByLabel("Platform").selectOption("");
    await expect.poll(() => page.locator("ul.sessions li").count()).toBe(4);
    await page.locator(`li[data-session="${tripId}"] a.row-link`).click();
    await page.waitForURL(`**/sessions/default/${tripId}`);
    await page.locator("ol.transcript li.message").nth(3).waitFor();
    const roles = await page.locator("ol.transcript .role").allTextContents();
    expect(roles).toEqual(["user", "assistant", "user", "assistant"]);
    expect(await page.locator("ol.transcript .content").first().textContent()).toBe(
      "Plan a weekend in Lisbon",
    );
    expect(await axeSerious()).toEqual([]);
  });

  it("renames, pins and archives from the session page (the store shows it)", async () => {
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByLabel("Title").fill("Lisbon weekend");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: "Lisbon weekend" }).waitFor();
    await page.getByRole("button", { name: "Pin", exact: true }).click();
    await page.getByRole("button", { name: "Unpin" }).waitFor();
    await withStore(home, async (s) =>
      expect(await s.sessions.get(tripId)).toMatchObject({ title: "Lisbon weekend", pinned: true }),
    );
    await shots.shoot(page, "dashboard-session.png");
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await page.getByRole("button", { name: "Unarchive" }).waitFor();
    await withStore(home, async (s) => expect((await s.sessions.get(tripId))?.archived).toBe(true));
    await page.getByRole("button", { name: "Unarchive" }).click();
    await page.getByRole("button", { name: "Archive", exact: true }).waitFor();
  });

  it("shows a message posted to the gateway live, without a reload", async () => {
    const marker = await page.evaluate("window.__sameDocument = true");
    expect(marker).toBe(true);
    await gw.post({ platform: "telegram", chat: "trip", content: "Add a day trip to Sintra" });
    await page
      .locator("ol.transcript .content", { hasText: "echo: Add a day trip to Sintra" })
      .waitFor({ timeout: 5000 });
    expect(await page.evaluate("window.__sameDocument")).toBe(true);
  });

  it("renders hostile message content as text and runs none of it", async () => {
    await page.goto(`${dash.address}/sessions`);
    await page.locator(`li[data-session="${evilId}"] a.row-link`).click();
    await page.locator("ol.transcript li.message").nth(3).waitFor();
    const texts = await page.locator("ol.transcript .content").allTextContents();
    expect(texts).toContain(HOSTILE_SCRIPT);
    expect(texts).toContain(HOSTILE_IMG);
    expect(await page.locator("ol.transcript script, ol.transcript img").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
  });

  it("renders markdown safely: no script, no dangerous link, no image; code in monospace with copy", async () => {
    await page.goto(`${dash.address}/sessions/default/${mdId}`);
    await page.locator("ol.transcript li.message").nth(3).waitFor();
    const t = page.locator("ol.transcript");
    expect(await t.locator("script, img, iframe, object, embed").count()).toBe(0);
    const hrefs = await t
      .locator("li.message.user .content a")
      .evaluateAll((as) =>
        as.map((a) => [a.getAttribute("href"), a.getAttribute("rel"), a.getAttribute("target")]),
      );
    // Only the https link became a link; every other one stayed text.
    expect(hrefs).toEqual([["https://example.com/docs", "noopener noreferrer", "_blank"]]);
    const first = (await t.locator(".content").first().textContent()) ?? "";
    expect(first).toContain("[click me](javascript:");
    expect(first).toContain("<a href=");
    expect(first).toContain("</code></pre><script>");
    // Lists and code: a real list, code in a monospace <pre><code> with a Copy button.
    const md = t.locator("li.message.user").nth(1);
    expect(await md.locator(".content ul li").allTextContents()).toEqual(["one", "two"]);
    const code = md.locator(".code-block pre code");
    expect(await code.textContent()).toBe("const answer = 42;\n");
    expect(
      await code.evaluate((c) => c.ownerDocument.defaultView!.getComputedStyle(c).fontFamily),
    ).toMatch(/mono/i);
    expect(await md.locator(".content :not(pre) > code").textContent()).toBe("inline");
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await md.getByRole("button", { name: "Copy code" }).click();
    await expect
      .poll(() => page.evaluate("navigator.clipboard.readText()"))
      .toBe("const answer = 42;\n");
    // Clicking each would-be link runs nothing.
    await t.locator(".content").first().click();
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    expect(await axeSerious()).toEqual([]);
  });

  it("searches every transcript with highlighted snippets", async () => {
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Search every message").fill("museums");
    await page.getByLabel("Search every message").press("Enter");
    await page.locator("ul.hits li").first().waitFor();
    expect(await page.locator("ul.hits mark").first().textContent()).toBe("museums");
    expect(await page.locator("ul.hits .title").first().textContent()).toBe("Lisbon weekend");
    expect(await axeSerious()).toEqual([]);
    await shots.shoot(page, "dashboard-search.png");
  });

  it("jumps to a session from the command palette", async () => {
    await page.keyboard.press("Control+k");
    await page.getByRole("combobox").fill("Lisbon");
    await page.getByRole("option", { name: /Lisbon weekend/ }).waitFor();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForURL(`**/sessions/default/${tripId}`);
  });

  it("shows doctor findings and holders on the health page, and the jobs page", async () => {
    // The report first (the page reads /api/health only every 5 s), then the page.
    await doctorReported(page);
    await page.getByRole("link", { name: "Health" }).click();
    await page.locator('li.finding[data-code="backups"]').waitFor({ timeout: 20_000 });
    const rows = await page.locator("table tbody tr").allTextContents();
    expect(rows.some((r) => r.includes("gateway"))).toBe(true);
    expect(rows.some((r) => r.includes("dashboard"))).toBe(true);
    // The chart: database/WAL size over time and messages per day, from the health samples.
    await expect.poll(() => page.locator("figure.chart svg[role=img]").count()).toBe(2);
    expect(await page.locator("figure.chart polyline.db").count()).toBe(1);
    expect(await page.locator("figure.chart rect.bar").count()).toBe(30);
    expect(await axeSerious()).toEqual([]);
    await shots.shoot(page, "dashboard-health.png", { fullPage: true });
    await page.getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("heading", { name: "No scheduled jobs yet" }).waitFor();
  });

  it("looks right in dark mode", async () => {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`${dash.address}/sessions/default/${tripId}`);
    await page.locator("ol.transcript li.message").nth(4).waitFor();
    const bg = await page.evaluate("getComputedStyle(document.documentElement).backgroundColor");
    expect(bg).toBe("rgb(23, 21, 19)");
    await shots.shoot(page, "dashboard-session-dark.png");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("chats with the agent through the gateway, the reply streamed into the page", async () => {
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Chat" })
      .click();
    await page.getByRole("heading", { name: "Chat" }).waitFor();
    await page.getByLabel("Message").fill("Hello from the dashboard");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .locator(".chat-log .message.assistant .content", {
        hasText: "echo: Hello from the dashboard",
      })
      .waitFor({ timeout: 10_000 });
    await page.waitForURL("**/chat/default/**");
    const sid = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    await withStore(home, async (s) => {
      expect((await s.sessions.get(sid))?.source).toBe("dashboard");
      expect((await s.messages.load(sid)).map((m) => m.content)).toEqual([
        "Hello from the dashboard",
        "echo: Hello from the dashboard",
      ]);
    });
    expect(await axeSerious()).toEqual([]);
    await shots.shoot(page, "dashboard-chat.png");
    // And a session of another platform continues where it is, from its own page.
    await page.goto(`${dash.address}/sessions/default/${tripId}`);
    await page
      .getByRole("toolbar", { name: "Session actions" })
      .getByRole("link", { name: "Chat", exact: true })
      .click();
    await page.waitForURL(`**/chat/default/${tripId}`);
    await page.getByLabel("Message").fill("Any late-night fado?");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .locator(".chat-log .message.assistant .content", { hasText: "echo: Any late-night fado?" })
      .waitFor({ timeout: 10_000 });
    // The page shows the reply as it streams, before the gateway commits it: wait for the commit.
    const last2 = () =>
      withStore(home, async (s) => (await s.messages.load(tripId)).map((m) => m.content).slice(-2));
    await until(
      "the reply committed",
      async () => (await last2())[1] === "echo: Any late-night fado?",
    );
    expect(await last2()).toEqual(["Any late-night fado?", "echo: Any late-night fado?"]);
  });

  it("sends a logged-out browser to the login page", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL("**/login");
    await page.goto(`${dash.address}/sessions`);
    await page.waitForURL("**/login");
    await page.getByRole("heading", { name: "hearth dashboard" }).waitFor();
    await until("done", () => true);
  });
});

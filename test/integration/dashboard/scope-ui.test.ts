import { type Browser, chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { chromiumPath } from "../../helpers/chromium.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { hearth } from "../gateway/security-fixture.js";

let browser: Browser;

/** Real headless Chromium (helpers/chromium.ts), one fresh context per login. */
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: await chromiumPath(),
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await stopDashboards();
  cleanupHomes();
});

describe("dashboard UI: actions a login's scope does not cover are not shown", () => {
  it("a read login sees the session without Rename, Pin, Delete or the Chat page; the operator's link sees them", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const s = await store.sessions.create({ source: "cli", title: "Read me" });
    await store.messages.append(s.id, { role: "user", content: "hello" });
    await store.close();
    const dash = await startDashboard(home);
    const created = await hearth(home, "--json", "token", "create", "--scope", "read");
    const { code } = JSON.parse(created.stdout) as { code: string };

    const shown = async (link: string) => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(link);
        await page.waitForURL(`${dash.address}/`);
        await page.goto(dash.url(`/sessions/default/${s.id}`));
        await page.getByRole("heading", { name: "Read me" }).waitFor();
        await page.getByRole("toolbar", { name: "Session actions" }).waitFor();
        const toolbar = page.getByRole("toolbar", { name: "Session actions" });
        return {
          actions: (await toolbar.locator("button, a").allTextContents()).map((t) => t.trim()),
          nav: (
            await page.getByRole("navigation", { name: "Main" }).locator("a").allTextContents()
          ).map((t) => t.trim()),
        };
      } finally {
        await context.close();
      }
    };

    const reader = await shown(dash.url(`/login?token=${code}`));
    expect(reader.actions).toEqual(["Export JSONL", "Export Markdown"]);
    expect(reader.nav).not.toContain("Chat");
    const operator = await shown(dash.login);
    expect(operator.actions).toEqual(
      expect.arrayContaining(["Rename", "Pin", "Archive", "Hide", "Delete", "Export JSONL"]),
    );
    expect(operator.nav).toContain("Chat");
  });
});

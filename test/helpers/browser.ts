import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page, type Request } from "playwright-core";
import { openStore } from "../../src/index.js";
import { chromiumPath } from "./chromium.js";
import { type DashboardChild, startDashboard, stopDashboards } from "./dashboard.js";
import { cleanupHomes, tempHome } from "./home.js";

/**
 * HEARTH_SCREENSHOTS=1 writes screenshots into docs/img (the docs'):
 * `shoot(page, name)` takes them there. Otherwise nothing reads them, so
 * `shoot` takes none (each cost 50-150 ms of Chromium's time, 60 a run);
 * `dir` is then a temp dir for what a test writes itself.
 */
export function screenshotDir(): {
  dir: string;
  cleanup(): void;
  shoot(page: Page, name: string, options?: { fullPage?: boolean }): Promise<void>;
} {
  if (process.env.HEARTH_SCREENSHOTS) {
    const dir = fileURLToPath(new URL("../../docs/img/", import.meta.url));
    return {
      dir,
      cleanup() {},
      async shoot(page, name, options = {}) {
        await page.screenshot({ path: join(dir, name), ...options });
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "hearth-shots-"));
  return {
    dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    async shoot() {},
  };
}

/**
 * Real headless Chromium (helpers/chromium.ts) with a fresh user data dir,
 * no network beyond loopback; `close()` removes the dir.
 */
export async function launchBrowser(): Promise<{
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}> {
  const userData = mkdtempSync(join(tmpdir(), "hearth-chromium-"));
  // A fresh user data dir each run (launchPersistentContext passes it as --user-data-dir).
  const context = await chromium.launchPersistentContext(userData, {
    executablePath: await chromiumPath(),
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--enable-precise-memory-info",
    ],
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
    locale: "en-US",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("dialog", (d) => void d.accept());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(userData, { recursive: true, force: true });
    },
  };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's violations on the page as it is: every impact, or only serious and critical ones. */
export async function axeViolations(page: Page, all = false): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as {
    violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => all || v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** The page's fetch and XHR requests in flight (an EventSource stays open and is not one). */
const inFlight = new WeakMap<Page, Set<Request>>();

function requestsInFlight(page: Page): Set<Request> {
  let set = inFlight.get(page);
  if (!set) {
    const open = new Set<Request>();
    const kind = (r: Request) => r.resourceType() === "fetch" || r.resourceType() === "xhr";
    page.on("request", (r) => kind(r) && open.add(r));
    page.on("requestfinished", (r) => open.delete(r));
    page.on("requestfailed", (r) => open.delete(r));
    inFlight.set(page, open);
    set = open;
  }
  return set;
}

/**
 * Start counting the page's requests in flight (before its first goto), for
 * `settled`.
 */
export function trackRequests(page: Page): void {
  requestsInFlight(page);
}

/**
 * Wait until what the page's scripts asked for has landed and been drawn: no
 * fetch in flight, then two animation frames (the responses' handlers and
 * React's render ran), and still none in flight (a request one of them made
 * was reported before the frames' answer, on the same connection). A
 * property, not a pause: on an idle machine it returns within a few frames.
 */
export async function settled(page: Page, timeoutMs = 30_000): Promise<void> {
  const open = requestsInFlight(page);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    while (open.size > 0) {
      if (Date.now() > deadline)
        throw new Error(`still in flight: ${[...open].map((r) => r.url()).join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await page.evaluate(
      "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))",
    );
    if (open.size === 0) return;
  }
}

/**
 * Wait until every profile's first doctor report is in /api/health (the
 * page must be on the dashboard, logged in). The dashboard runs doctor in
 * the background when it starts, and the health page reads /api/health
 * again only every 5 s: a test that opens the page once the report is
 * there sees it at once instead of waiting out that refresh.
 */
export async function doctorReported(page: Page, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const reported = `fetch("/api/health").then((r) => r.json()).then((b) => b.profiles.length > 0 &&
    b.profiles.every((p) => p.doctor && (p.doctor.finishedAt !== null || p.doctor.report)))`;
  while (!(await page.evaluate(reported))) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the first doctor report");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A dashboard on `home` and a browser logged in to it through its one-time link. */
export async function loggedInConsole(home: string): Promise<{
  dash: DashboardChild;
  browser: Awaited<ReturnType<typeof launchBrowser>>;
  page: Page;
}> {
  const dash = await startDashboard(home);
  const browser = await launchBrowser();
  const page = browser.page;
  await page.goto(dash.login);
  await page.waitForURL(`${dash.address}/`);
  return { dash, browser, page };
}

/**
 * A new home with one imported session of `count` messages (user and
 * assistant in turn, `content(i)` each), and a console logged in to it:
 * the long-transcript files' start (beforeAll).
 */
export async function consoleOnTranscript(
  title: string,
  count: number,
  content: (i: number) => string,
): Promise<Awaited<ReturnType<typeof loggedInConsole>> & { sessionId: string }> {
  const home = tempHome();
  const writer = await openStore({ home });
  let sessionId: string;
  try {
    sessionId = (await writer.sessions.create({ source: "import", title })).id;
    await writer.messages.appendBatch(
      sessionId,
      Array.from({ length: count }, (_, i) => ({
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: content(i),
      })),
    );
  } finally {
    await writer.close();
  }
  return { ...(await loggedInConsole(home)), sessionId };
}

/** What a console file opened, closed (afterAll): its browser, its dashboards, its homes. */
export async function closeConsole(
  browser: Awaited<ReturnType<typeof launchBrowser>> | undefined,
): Promise<void> {
  await browser?.close();
  await stopDashboards();
  cleanupHomes();
}

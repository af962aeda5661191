import type { Page, Request, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { type launchBrowser, loggedInConsole } from "../helpers/browser.js";
import { type DashboardChild, stopDashboards } from "../helpers/dashboard.js";
import { cleanupHomes, tempHome } from "../helpers/home.js";
import { transcriptView } from "../helpers/transcript-view.js";

// Issue 47: the transcript's two protections (web/src/virtual.tsx's row anchor, and
// web/src/transcript.ts's look again after a load), each forced deterministically: the page
// is held (page.route) until the reader sits where the protection matters, then released,
// and the outcome is a property (top row's ordinal and offset, a page asked for), not a time.
const COUNT = 1_200;
/** Messages the transcript keeps in memory at most (web/src/transcript.ts KEEP). */
const KEEP = 1_000;

let dash: DashboardChild;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let sessionId: string;

beforeAll(async () => {
  const home = tempHome();
  const writer = await openStore({ home });
  try {
    const s = await writer.sessions.create({ source: "import", title: "Twelve hundred" });
    sessionId = s.id;
    // Rows of 1 to 7 lines (about 60 to 190 px, none the list's 90 px estimate): a page of 100
    // rows added or dropped above the view moves it by thousands of pixels unless corrected.
    await writer.messages.appendBatch(
      sessionId,
      Array.from({ length: COUNT }, (_, i) => ({
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: `message ${i}: ${"lorem ipsum dolor sit amet\n\n".repeat(1 + (i % 7))}`,
      })),
    );
  } finally {
    await writer.close();
  }
  ({ dash, browser, page } = await loggedInConsole(home));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopDashboards();
  cleanupHomes();
});

const { loaded, topRow } = transcriptView(() => page);

/** The message at the top of the view is the one seen before, at the same offset (2 px). */
async function expectSamePlace(seen: { ordinal: number; top: number }): Promise<void> {
  const now = await topRow();
  expect(now.ordinal).toBe(seen.ordinal);
  expect(Math.abs(now.top - seen.top)).toBeLessThanOrEqual(2);
}

/** The messages API's `before` of a request (NaN: the newest page). */
const beforeOf = (url: string) => Number(new URL(url).searchParams.get("before") ?? Number.NaN);
const isMessages = (u: URL) => u.pathname.endsWith(`/${sessionId}/messages`);

/** Requests of the messages API, and a gate that holds those `which` picks until released. */
async function holdPages(which: (before: number) => boolean) {
  const asked: string[] = [];
  const held: string[] = [];
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const onRequest = (r: Request) => {
    if (isMessages(new URL(r.url()))) asked.push(r.url());
  };
  page.on("request", onRequest);
  await page.route(isMessages, async (route: Route) => {
    if (which(beforeOf(route.request().url()))) {
      held.push(route.request().url());
      await gate;
    }
    await route.continue();
  });
  return {
    asked,
    held,
    release,
    /** Lets any held page go (unroute waits for the handlers that run), then stops holding. */
    done: () => {
      release();
      page.off("request", onRequest);
      return page.unroute(isMessages);
    },
  };
}

/** Opens the transcript at a message (`at`) and waits until it settled there. */
async function openAt(at: number) {
  await page.goto(`${dash.address}/sessions/default/${sessionId}?at=${at}`);
  await page.locator("ol.transcript li.message.target").waitFor();
  // Settled: the target focused (settle() in Session.tsx runs once the rows were measured).
  await expect
    .poll(() => page.evaluate("document.activeElement?.classList.contains('target') ?? false"))
    .toBe(true);
}

/**
 * Resolves once an IntersectionObserver made now reports `selector` within 400 px of the view.
 * Observers are notified in the order they were made, in one task: when this one is, the
 * page's own observer (made earlier) has been told too.
 */
function seenNear(selector: string) {
  return page.evaluate(`new Promise((resolve, reject) => {
    const el = document.querySelector(${JSON.stringify(selector)});
    if (!el) return reject(new Error("no such element"));
    const o = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          o.disconnect();
          resolve(true);
        }
      },
      { rootMargin: "400px 0px" },
    );
    o.observe(el);
  })`);
}

describe("the transcript keeps the reader's place and loads the next page (issue 47)", () => {
  it("keeps the message at the top of the view where it was when an older page lands above it", async () => {
    await openAt(600);
    expect(await loaded()).toBe(100);
    const gate = await holdPages((before) => before < 600);
    try {
      // To the top: the observer asks for the older page, held until the reader has settled.
      await page.evaluate("window.scrollTo(0, 0)");
      await expect.poll(() => gate.held.length, { timeout: 30_000 }).toBe(1);
      // Settled a little below the top, mid-row: the row at the top of the view is cut.
      await page.evaluate("window.scrollTo(0, 300)");
      await page.evaluate(
        "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))",
      );
      const seen = await topRow();
      expect(seen.ordinal).toBeGreaterThan(0);
      gate.release();
      // The page landed (the list commits and corrects before paint: read right after).
      await expect.poll(loaded, { timeout: 30_000 }).toBe(200);
      // 100 rows of ~90 px estimated went above: unanchored, the view would show rows ~9,000
      // px further up (another ordinal at another offset).
      await expectSamePlace(seen);
    } finally {
      await gate.done();
    }
  }, 120_000);

  it("keeps the message at the top of the view where it was when a newer page lands and the oldest go", async () => {
    await openAt(30);
    const first = Number(
      await page.locator("ol.transcript li.message").first().getAttribute("data-ordinal"),
    );
    expect(await loaded()).toBeLessThan(100);
    // The newer page that would take the kept messages past KEEP (a page asks for those
    // before last + 101) is held; those before it pass.
    const gate = await holdPages((before) => before - 1 - first + 1 > KEEP);
    try {
      // Down page by page until that page is asked for.
      await expect
        .poll(
          async () => {
            await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
            return gate.held.length;
          },
          { timeout: 60_000, interval: 500 },
        )
        .toBe(1);
      expect(await loaded()).toBeGreaterThan(KEEP - 100);
      // Nothing dropped yet: no older page to load.
      expect(await page.getByRole("button", { name: "Load older messages" }).count()).toBe(0);
      // Settled above the bottom, mid-row (the page's height may shrink under a clamped view).
      await page.evaluate("window.scrollBy(0, -500)");
      await page.evaluate(
        "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))",
      );
      const seen = await topRow();
      gate.release();
      // Landed: the oldest went (an older page to load again), still KEEP kept.
      await page.getByRole("button", { name: "Load older messages" }).waitFor({
        state: "attached",
        timeout: 30_000,
      });
      expect(await loaded()).toBe(KEEP);
      // The oldest rows (81 of them: thousands of pixels) went above: unanchored, the view would move
      // down the transcript by as much.
      await expectSamePlace(seen);
    } finally {
      await gate.done();
    }
  }, 120_000);

  it("loads the newer page when a load ends with its button in view (the observer's event came during the load)", async () => {
    await openAt(600);
    const gate = await holdPages((before) => before < 600);
    try {
      // To the top: the older page is asked for and held.
      await page.evaluate("window.scrollTo(0, 0)");
      await expect.poll(() => gate.held.length, { timeout: 30_000 }).toBe(1);
      // Meanwhile to the bottom: the observer reports "Load newer messages" in view while the
      // older load still runs, so that load of the newer page is not started (one at a time).
      // (Rows measured taller than estimated may push the button down: scrolled again until
      // it stays near.)
      await expect
        .poll(
          async () => {
            await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
            return page.evaluate(`(() => {
              const r = document.querySelector("ol.transcript ~ button.load-older").getBoundingClientRect();
              return r.top < innerHeight + 400 && r.bottom > -400;
            })()`);
          },
          { timeout: 30_000, interval: 500 },
        )
        .toBe(true);
      await seenNear("ol.transcript ~ button.load-older");
      const newerAsked = () => gate.asked.filter((u) => beforeOf(u) > 600).length;
      expect(newerAsked()).toBe(0);
      gate.release();
      await expect.poll(loaded, { timeout: 30_000 }).toBeGreaterThanOrEqual(200);
      // The button stayed in view throughout (no new event): only the look after the load
      // ends asks for the newer page.
      await expect.poll(newerAsked, { timeout: 15_000 }).toBe(1);
      await expect.poll(loaded, { timeout: 30_000 }).toBeGreaterThanOrEqual(300);
    } finally {
      await gate.done();
    }
  }, 120_000);
});

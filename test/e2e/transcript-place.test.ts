import type { Page, Request, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeConsole, consoleOnTranscript, type launchBrowser } from "../helpers/browser.js";
import type { DashboardChild } from "../helpers/dashboard.js";
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
  // Rows of 1 to 7 lines (about 60 to 190 px, none the list's 90 px estimate): a page of 100
  // rows added or dropped above the view moves it by thousands of pixels unless corrected.
  ({ dash, browser, page, sessionId } = await consoleOnTranscript(
    "Twelve hundred",
    COUNT,
    (i) => `message ${i}: ${"lorem ipsum dolor sit amet\n\n".repeat(1 + (i % 7))}`,
  ));
}, 120_000);

afterAll(() => closeConsole(browser));

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

/**
 * Requests of the messages API, and a gate that holds those `which` picks: `release` lets all go
 * (and those after pass), `releaseWhere` only the held ones whose `before` it picks.
 */
async function holdPages(which: (before: number) => boolean) {
  const asked: string[] = [];
  const held: string[] = [];
  let open = false;
  let waiting: { before: number; go: () => void }[] = [];
  const onRequest = (r: Request) => {
    if (isMessages(new URL(r.url()))) asked.push(r.url());
  };
  page.on("request", onRequest);
  await page.route(isMessages, async (route: Route) => {
    const before = beforeOf(route.request().url());
    if (!open && which(before)) {
      held.push(route.request().url());
      await new Promise<void>((go) => waiting.push({ before, go }));
    }
    await route.continue();
  });
  const releaseWhere = (pick: (before: number) => boolean) => {
    for (const w of waiting) if (pick(w.before)) w.go();
    waiting = waiting.filter((w) => !pick(w.before));
  };
  const release = () => {
    open = true;
    releaseWhere(() => true);
  };
  return {
    asked,
    held,
    release,
    releaseWhere,
    /** Lets any held page go (unroute waits for the handlers that run), then stops holding. */
    done: () => {
      release();
      page.off("request", onRequest);
      return page.unroute(isMessages);
    },
  };
}

/** Two frames on: the list's scroll frame and the renders it starts have run. */
const frames = () =>
  page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");

/** Pixels between the view's bottom and the page's end (0: the reader is at the end). */
const fromEnd = () =>
  page.evaluate("document.documentElement.scrollHeight - innerHeight - scrollY") as Promise<number>;

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
      await frames();
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
      // Down page by page until that page is asked for (each look scrolls to the end again:
      // every 100 ms, so a page that landed is followed by the next at once, not up to 500 ms on).
      await expect
        .poll(
          async () => {
            await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
            return gate.held.length;
          },
          { timeout: 60_000, interval: 100 },
        )
        .toBe(1);
      expect(await loaded()).toBeGreaterThan(KEEP - 100);
      // Nothing dropped yet: no older page to load.
      expect(await page.getByRole("button", { name: "Load older messages" }).count()).toBe(0);
      // Settled above the bottom, mid-row (the page's height may shrink under a clamped view).
      await page.evaluate("window.scrollBy(0, -500)");
      await frames();
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

  it("keeps a reader who scrolled to the end while a page loaded at the end, and loads the newer page", async () => {
    await openAt(600);
    expect(await loaded()).toBe(100);
    // Every page but the newest is held: the older one asked for on reaching the top, and
    // the newer one after it.
    const gate = await holdPages((before) => Number.isFinite(before));
    const newerAsked = () => gate.asked.filter((u) => beforeOf(u) > 600).length;
    try {
      await page.evaluate("window.scrollTo(0, 0)");
      await expect.poll(() => gate.held.length, { timeout: 30_000 }).toBe(1);
      // While the older page is in flight, one scroll to the end (a reader dragging the
      // scrollbar down), not repeated: the rows there were never measured (the list opened at
      // 600), and rendered they are not the 90 px estimate. The reader stays at the end: unpinned,
      // the end moved away by what they measured more than estimated.
      await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
      await frames();
      expect(await fromEnd()).toBeLessThanOrEqual(1);
      expect(newerAsked()).toBe(0);
      // The older page lands above: the reader is still at the end, and the look after the
      // load asks for the newer page (held: nothing lands below meanwhile).
      gate.releaseWhere((before) => before < 600);
      await expect.poll(loaded, { timeout: 30_000 }).toBe(200);
      await expect.poll(newerAsked, { timeout: 15_000 }).toBe(1);
      expect(await fromEnd()).toBeLessThanOrEqual(1);
      gate.release();
      await expect.poll(loaded, { timeout: 30_000 }).toBe(300);
    } finally {
      await gate.done();
    }
  }, 120_000);

  it("lets a reader who scrolled away from the end as a page landed keep their scroll (it is not pulled back to the end)", async () => {
    await openAt(600);
    const gate = await holdPages((before) => Number.isFinite(before));
    try {
      await page.evaluate("window.scrollTo(0, 0)");
      await expect.poll(() => gate.held.length, { timeout: 30_000 }).toBe(1);
      await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
      await frames();
      expect(await fromEnd()).toBeLessThanOrEqual(1);
      // The reader scrolls up 600 px in the very task the older page's answer is read, so the
      // page lands (and the list renders) before any frame saw that scroll: forced here by
      // scrolling when the answer's text is read. The place is noted then, in the DOM as it
      // was before the page landed.
      await page.evaluate(`(() => {
        const text = Response.prototype.text;
        Response.prototype.text = function () {
          return text.call(this).then((t) => {
            if (/[?&]before=[0-5]?[0-9]?[0-9](&|$)/.test(this.url)) {
              Response.prototype.text = text;
              window.scrollBy(0, -600);
              for (const li of document.querySelectorAll("ol.transcript li.message")) {
                const r = li.getBoundingClientRect();
                if (r.bottom > 0) {
                  window.__seen = { ordinal: Number(li.getAttribute("data-ordinal")), top: r.top };
                  break;
                }
              }
            }
            return t;
          });
        };
      })()`);
      gate.releaseWhere((before) => before < 600);
      await expect.poll(loaded, { timeout: 30_000 }).toBe(200);
      const seen = (await page.evaluate("window.__seen")) as { ordinal: number; top: number };
      expect(seen?.ordinal).toBeGreaterThan(0);
      // The reader's scroll wins: the rows they scrolled to stay in view where they were (the
      // page added above is corrected for), not the end they had left.
      await expectSamePlace(seen);
      expect(await fromEnd()).toBeGreaterThan(500);
    } finally {
      await page.evaluate("delete window.__seen");
      await gate.done();
    }
  }, 120_000);
});

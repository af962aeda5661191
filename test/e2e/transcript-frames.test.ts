import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeConsole, consoleOnTranscript, type launchBrowser } from "../helpers/browser.js";
import type { DashboardChild } from "../helpers/dashboard.js";
import { frameCounter } from "../helpers/frame-counts.js";

// Issue 47: the work each scroll frame of a long transcript does, counted (not timed) in real
// Chromium: rows rendered, markdown renders, layout reads, layouts. A scroll frame renders the
// rows that come into view and measures them, not every row in view again.
const COUNT = 1_200;
const STEPS = 60;
const STEP_PX = 150;

let dash: DashboardChild;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let sessionId: string;

beforeAll(async () => {
  ({ dash, browser, page, sessionId } = await consoleOnTranscript(
    "Frames",
    COUNT,
    (i) =>
      `message ${i}: **bold** and \`code\`\n\n${"lorem ipsum dolor sit amet\n\n".repeat(1 + (i % 5))}`,
  ));
}, 120_000);

afterAll(() => closeConsole(browser));

it("a scroll frame renders and measures only the rows that come into view", async () => {
  const counter = await frameCounter(page);
  await page.goto(`${dash.address}/sessions/default/${sessionId}`);
  await page.locator("ol.transcript li.message").first().waitFor();
  await expect
    .poll(() => page.evaluate("document.documentElement.scrollHeight - innerHeight - scrollY"))
    .toBeLessThan(50);
  await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");

  await counter.start();
  // Up from the end, one scroll a frame (older pages load on the way, as they do for a reader).
  const before = new Set(
    (await page.evaluate(
      `[...document.querySelectorAll("ol.transcript li.message")].map((li) => li.dataset.messageId)`,
    )) as string[],
  );
  const seen = new Set<string>();
  let inView = 0;
  for (let i = 0; i < STEPS; i++) {
    const ids = (await page.evaluate(`(async () => {
      scrollBy(0, -${STEP_PX});
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return [...document.querySelectorAll("ol.transcript li.message")].map((li) => li.dataset.messageId);
    })()`)) as string[];
    for (const id of ids) seen.add(id);
    inView = Math.max(inView, ids.length);
  }
  const c = await counter.take({
    rows: "Link to this message",
    markdown: "Input data should be a String",
  });
  const perFrame = (n: number) => Math.round((n / STEPS) * 10) / 10;
  console.log(
    `transcript frames: ${STEPS} frames, ${seen.size} messages shown, at most ${inView} rows in the DOM; ` +
      `rows rendered ${c.calls.rows} (${perFrame(c.calls.rows!)}/frame), markdown renders ${c.calls.markdown}, ` +
      `getBoundingClientRect ${c.rect} (${perFrame(c.rect)}/frame), offsetTop/Height ${c.offset} ` +
      `(${perFrame(c.offset)}/frame), scrollHeight ${c.scrollHeight}, layouts ${c.layouts} (${perFrame(c.layouts)}/frame)`,
  );
  const fresh = [...seen].filter((id) => !before.has(id)).length;
  expect(fresh).toBeGreaterThan(20);
  // Markdown: at most once per message that came into view (none again for rows already shown).
  expect(c.calls.markdown).toBeLessThanOrEqual(fresh);
  // Rows: those that came into view, not rows rendered and dropped again in the next frame
  // (115 for 53 before issue 47's cut), nor rows in view rendered again.
  expect(c.calls.rows).toBeGreaterThan(0);
  expect(c.calls.rows).toBeLessThanOrEqual(fresh + 5);
  // Layout reads: the new rows measured (two offsetTop and one offsetHeight each), not every row
  // in view in every commit (82 a frame before); a few rects a frame for the row at the top.
  expect(c.offset).toBeLessThanOrEqual(3 * c.calls.rows! + 10);
  expect(c.rect).toBeLessThanOrEqual(25 * STEPS);
  // At most one layout a frame (1.9 before: a forced one in most frames).
  expect(c.layouts).toBeLessThanOrEqual(STEPS);

  // A row measured once is measured again when its size changes (a larger font here, its text
  // wrapped anew after a resize): every row in the DOM (web/src/virtual.tsx's ResizeObserver).
  const rows = (await page.locator("ol.transcript li.message").count()) as number;
  await counter.start();
  // (Through the CSSOM: the page's CSP allows no inline style tag.)
  await page.evaluate(`document.querySelector("ol.transcript").style.fontSize = "24px"`);
  await expect
    .poll(async () => (await counter.take({})).offset, { timeout: 30_000 })
    .toBeGreaterThanOrEqual(rows);
}, 180_000);

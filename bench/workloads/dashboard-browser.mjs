// Workload 9d: the dashboard in a real Chromium (playwright-core driving the
// Chromium the browser tests use: bench/lib/chromium.mjs), served by a real
// `hearth dashboard run` on the workload's store (100,000 sessions in full
// mode, and a 20,000-message session).
//
// - First load: a fresh browser profile (empty cache) opens the sessions
//   list; time from navigation to the first session row drawn, and the
//   bytes over the wire (Chromium's Network.loadingFinished
//   encodedDataLength: compressed bodies plus headers, every request).
// - Transcript scroll: the 20,000-message session opened at its newest
//   page, scrolled 60 px per frame; each frame's time is the gap between
//   requestAnimationFrame callbacks, with Chromium's frame-rate limit off
//   (--disable-frame-rate-limit, --disable-gpu-vsync) so a gap is the
//   frame's own work, not the 60 Hz clock. Then it is scrolled up through
//   every older page to the first message (200 pages) and scrolled again.
// - JS heap: used heap after a forced garbage collection (CDP
//   HeapProfiler.collectGarbage, Runtime.getHeapUsage) with 100 messages
//   scrolled through and with all 20,000; and the DOM nodes at both.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { chromiumPath } from "../lib/chromium.mjs";
import { dashboardProcess } from "../lib/dashboard-process.mjs";
import { row } from "../lib/rows.mjs";
import { quantile } from "../lib/stats.mjs";

const SCROLL_STEPS = 200;

async function launch() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
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
      "--disable-frame-rate-limit",
      "--disable-gpu-vsync",
    ],
    viewport: { width: 1280, height: 900 },
    locale: "en-US",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  return {
    context,
    page,
    cdp,
    close: async () => {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Gaps between animation frames (ms) while the page scrolls `steps` times by `by` px, one per frame. */
function scrollFrames(page, steps, by) {
  return page.evaluate(
    async ([steps, by]) => {
      const gaps = [];
      let last = performance.now();
      for (let i = 0; i < steps; i++) {
        window.scrollBy(0, by);
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        gaps.push(now - last);
        last = now;
      }
      return gaps;
    },
    [steps, by],
  );
}

async function heapAndNodes(page, cdp) {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  const nodes = await page.evaluate(() => document.getElementsByTagName("*").length);
  return { heapMb: usedSize / 2 ** 20, nodes };
}

async function firstLoad(dash) {
  const b = await launch();
  try {
    const url = new URL(dash.address);
    const [name, ...rest] = dash.cookie.split("=");
    await b.context.addCookies([{ name, value: rest.join("="), url: url.origin }]);
    await b.cdp.send("Network.enable");
    let bytes = 0;
    let requests = 0;
    b.cdp.on("Network.loadingFinished", (e) => {
      bytes += e.encodedDataLength;
      requests++;
    });
    const t0 = performance.now();
    await b.page.goto(`${dash.address}/`);
    await b.page.locator("ul.sessions li").first().waitFor({ timeout: 30_000 });
    const ms = performance.now() - t0;
    // Whatever the page still fetches for this view (a live stream opens; it never finishes).
    await b.page.waitForLoadState("networkidle").catch(() => undefined);
    return { ms, kb: bytes / 1000, requests };
  } finally {
    await b.close();
  }
}

async function transcript(dash, longId, long, log) {
  const b = await launch();
  try {
    const url = new URL(dash.address);
    const [name, ...rest] = dash.cookie.split("=");
    await b.context.addCookies([{ name, value: rest.join("="), url: url.origin }]);
    const { page, cdp } = b;
    await page.goto(`${dash.address}/sessions/default/${longId}`);
    const last = page.locator("ol.transcript li.message").last();
    await last.waitFor({ timeout: 30_000 });
    const framesFirst = await scrollFrames(page, SCROLL_STEPS, -60);
    const first = await heapAndNodes(page, cdp);
    // Up through every older page: each loads when "Load older messages" comes into view.
    const t0 = performance.now();
    const oldest = () =>
      page.evaluate(() => {
        const m = document.querySelector("ol.transcript li.message");
        return m ? Number(m.getAttribute("data-ordinal") ?? Number.NaN) : Number.NaN;
      });
    let pages = 0;
    const olderButton = page.getByRole("button", { name: "Load older messages" });
    while (await olderButton.count()) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(20);
      pages++;
      if (pages > 4 * (long / 100)) throw new Error("the transcript never reached its first page");
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    log(
      `  9d transcript: ${pages} scroll-to-top steps to the first message in ${((performance.now() - t0) / 1000).toFixed(1)} s (oldest ordinal shown ${await oldest()})`,
    );
    const framesLater = await scrollFrames(page, SCROLL_STEPS, 60);
    const later = await heapAndNodes(page, cdp);
    return { framesFirst, framesLater, first, later };
  } finally {
    await b.close();
  }
}

/** Rounds of first load and transcript scrolling; per-round figures. */
export async function browserRounds({ home, longId, long, rounds, log }) {
  const dash = await dashboardProcess(home);
  const out = { loadMs: [], loadKb: [], frameP95: [], heapFirst: [], heapLater: [], heapRatio: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const load = await firstLoad(dash);
      const t = await transcript(dash, longId, long, log);
      const p95 = quantile([...t.framesFirst, ...t.framesLater], 0.95);
      out.loadMs.push(load.ms);
      out.loadKb.push(load.kb);
      out.frameP95.push(p95);
      out.heapFirst.push(t.first.heapMb);
      out.heapLater.push(t.later.heapMb);
      out.heapRatio.push(t.later.heapMb / t.first.heapMb);
      log(
        `  9d round ${round + 1}/${rounds}: first load ${load.ms.toFixed(0)} ms, ${load.kb.toFixed(1)} kB over the wire (${load.requests} requests); scroll frame p95 ${quantile(t.framesFirst, 0.95).toFixed(1)} ms at 100 messages, ${quantile(t.framesLater, 0.95).toFixed(1)} ms at ${long.toLocaleString("en-US")}; JS heap ${t.first.heapMb.toFixed(1)} → ${t.later.heapMb.toFixed(1)} MiB, DOM nodes ${t.first.nodes} → ${t.later.nodes}`,
      );
    }
  } finally {
    await dash.stop();
  }
  return out;
}

/** The rows of 9d: first load (time, bytes), scroll frames, heap; `note` says the machine's load. */
export function browserRows({ workload, browser, long, note }) {
  return [
    row({
      workload,
      metric: "first load in Chromium (empty cache): sessions list to its first row",
      unit: "ms",
      better: "lower",
      hearth: browser.loadMs,
      note,
      target: { text: "< 1 s", kind: "absolute", op: "<", value: 1000, basis: "median" },
    }),
    row({
      workload,
      metric: "first load: bytes over the wire (compressed bodies and headers, every request)",
      unit: "kB",
      better: "lower",
      hearth: browser.loadKb,
      target: { text: "< 100 kB", kind: "absolute", op: "<", value: 100, basis: "worst" },
    }),
    row({
      workload,
      metric: `${long.toLocaleString("en-US")}-message transcript scrolled in Chromium, frame p95 (requestAnimationFrame gaps, frame-rate limit off)`,
      unit: "ms",
      better: "lower",
      hearth: browser.frameP95,
      note,
      target: { text: "< 16 ms", kind: "absolute", op: "<", value: 16, basis: "median" },
    }),
    row({
      workload,
      metric: `JS heap after GC with all ${long.toLocaleString("en-US")} messages scrolled through`,
      unit: "MiB",
      better: "lower",
      hearth: browser.heapLater,
      ceiling: browser.heapFirst,
      baselines: { ceiling: "the same page with its newest 100 scrolled through" },
      target: {
        text: "<= 1.5× with 100 (flat: at most 1,000 messages are kept)",
        kind: "ceiling",
        op: "<=",
        value: 1.5,
        basis: "worst",
      },
    }),
  ];
}

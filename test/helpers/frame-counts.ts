import type { CDPSession, Page } from "playwright-core";

/**
 * Counts of the work a page does, taken from outside it so the shipped bundle carries nothing:
 * layout reads (getBoundingClientRect, offsetTop/offsetHeight, scrollHeight) by wrappers an
 * init script installs before the page's scripts run; layouts Chromium did (CDP
 * Performance.getMetrics LayoutCount); and how often a function of the bundle ran (V8's precise
 * coverage with call counts), the function found by a string only it holds.
 */
export async function frameCounter(page: Page) {
  await page.addInitScript(`(() => {
    const reads = { rect: 0, offset: 0, scrollHeight: 0 };
    window.__layoutReads = reads;
    const rect = Element.prototype.getBoundingClientRect;
    Element.prototype.getBoundingClientRect = function () { reads.rect++; return rect.call(this); };
    for (const name of ["offsetTop", "offsetHeight"]) {
      const d = Object.getOwnPropertyDescriptor(HTMLElement.prototype, name);
      Object.defineProperty(HTMLElement.prototype, name, {
        configurable: true,
        get() { reads.offset++; return d.get.call(this); },
      });
    }
    const sh = Object.getOwnPropertyDescriptor(Element.prototype, "scrollHeight");
    Object.defineProperty(Element.prototype, "scrollHeight", {
      configurable: true,
      get() { reads.scrollHeight++; return sh.get.call(this); },
    });
  })()`);
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

  type Coverage = {
    result: {
      url: string;
      functions: { ranges: { startOffset: number; endOffset: number; count: number }[] }[];
    }[];
  };
  const sources = new Map<string, string>();
  const source = async (url: string) => {
    let s = sources.get(url);
    if (s === undefined) {
      s = (await page.evaluate(`fetch(${JSON.stringify(url)}).then((r) => r.text())`)) as string;
      sources.set(url, s);
    }
    return s;
  };
  const layouts = async () => {
    const { metrics } = (await cdp.send("Performance.getMetrics")) as {
      metrics: { name: string; value: number }[];
    };
    return metrics.find((m) => m.name === "LayoutCount")?.value ?? 0;
  };
  const reads = () =>
    page.evaluate("({ ...window.__layoutReads })") as Promise<{
      rect: number;
      offset: number;
      scrollHeight: number;
    }>;

  let layoutsAt = 0;
  let readsAt = { rect: 0, offset: 0, scrollHeight: 0 };
  return {
    /** Start a pass: every count from here (taking coverage resets V8's call counts). */
    async start() {
      await cdp.send("Profiler.takePreciseCoverage");
      layoutsAt = await layouts();
      readsAt = await reads();
    },
    /** Counts since start: layouts, layout reads, and the calls of each function marked. */
    async take(markers: Record<string, string>) {
      const cov = (await cdp.send("Profiler.takePreciseCoverage")) as Coverage;
      const now = await reads();
      const calls: Record<string, number> = {};
      for (const [name, marker] of Object.entries(markers)) {
        calls[name] = Number.NaN;
        for (const script of cov.result) {
          if (!script.url.includes("/assets/")) continue;
          const at = (await source(script.url)).indexOf(marker);
          if (at < 0) continue;
          // The innermost function holding the marker.
          let best: { startOffset: number; endOffset: number; count: number } | undefined;
          for (const f of script.functions) {
            const r = f.ranges[0]!;
            if (r.startOffset <= at && at < r.endOffset)
              if (!best || r.endOffset - r.startOffset < best.endOffset - best.startOffset)
                best = r;
          }
          if (best) calls[name] = best.count;
        }
      }
      return {
        layouts: (await layouts()) - layoutsAt,
        rect: now.rect - readsAt.rect,
        offset: now.offset - readsAt.offset,
        scrollHeight: now.scrollHeight - readsAt.scrollHeight,
        calls,
      };
    },
  };
}

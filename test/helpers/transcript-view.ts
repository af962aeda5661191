import type { Page } from "playwright-core";

/**
 * What a dashboard transcript (web/src/virtual.tsx) shows in a real browser:
 * rendered rows, kept messages, and where the rows sit in the viewport.
 */
export function transcriptView(page: () => Page) {
  const message = () => page().locator("ol.transcript li.message");
  return {
    /** Message rows in the DOM. */
    rows: () => message().count(),
    /** Messages the page keeps (the list's data-loaded). */
    loaded: async () => Number(await page().locator("ol.transcript").getAttribute("data-loaded")),
    /** The ordinal of the last rendered row. */
    lastRow: () => message().last().getAttribute("data-ordinal").then(Number),
    /**
     * The ordinal of a message row across the middle band of the 800 px viewport (350 to
     * 450 px: wider than the gap between two rows, which a single point can fall in); NaN:
     * the view is blank there.
     */
    centre: () =>
      page().evaluate(`(() => {
        for (const li of document.querySelectorAll("ol.transcript li.message")) {
          const r = li.getBoundingClientRect();
          if (r.top < 450 && r.bottom > 350) return Number(li.getAttribute("data-ordinal"));
        }
        return NaN;
      })()`) as Promise<number>,
    /** The first message row whose bottom is below the top of the viewport: ordinal and offset. */
    topRow: () =>
      page().evaluate(`(() => {
        for (const li of document.querySelectorAll("ol.transcript li.message")) {
          const r = li.getBoundingClientRect();
          if (r.bottom > 0) return { ordinal: Number(li.getAttribute("data-ordinal")), top: r.top };
        }
        return { ordinal: NaN, top: NaN };
      })()`) as Promise<{ ordinal: number; top: number }>,
    /** Elements in the document. */
    nodes: () => page().evaluate("document.getElementsByTagName('*').length") as Promise<number>,
  };
}

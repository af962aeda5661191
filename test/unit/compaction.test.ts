import { describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/validate.js";
import { HearthError } from "../../src/errors.js";
import { estimateTokens, summaryRequest, summaryWindows } from "../../src/turn/compaction.js";

describe("compaction windows", () => {
  it("keeps every request under the budget: whole lines in order, a line too long for any window cut alone", () => {
    const budget = 1_000;
    const lines = [
      ...Array.from({ length: 40 }, (_, i) => `[user] line ${i} ${"x".repeat(90)}`),
      `[tool t] ${"y".repeat(50_000)}`,
      "[assistant] last",
    ];
    const windows = summaryWindows(lines, budget);
    expect(windows.length).toBeGreaterThan(3);
    expect(windows.flat().slice(0, 40)).toEqual(lines.slice(0, 40));
    expect(windows.flat()).toHaveLength(lines.length);
    const long = windows.find((w) => w.some((l) => l.startsWith("[tool t]")))!;
    expect(long).toHaveLength(1);
    expect(long[0]).toMatch(/ \[cut\]$/);
    const summarySoFar = "z".repeat(100_000);
    for (const w of windows)
      expect(estimateTokens(summaryRequest(w, summarySoFar, budget))).toBeLessThanOrEqual(budget);
  });

  it("refuses a budget too small to hold a request", () => {
    expect(() =>
      validateConfig({ gateway: { compactionWindowTokens: 999 } }, "config.json"),
    ).toThrow(HearthError);
  });
});

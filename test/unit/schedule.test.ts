import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/schema.js";
import { dueBetween, jitterFor, MAX_RECORDED_DUE, nextDue } from "../../src/ops/jobs/due.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (s: string) => Date.parse(s);

describe("schedules (croner) in a fixed time zone", () => {
  const daily = { schedule: "30 2 * * *", timezone: "Europe/Berlin" };

  it("runs a job due in the skipped hour once, right after the spring-forward gap", () => {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day.
    expect(iso(nextDue(daily, at("2026-03-28T12:00:00Z")))).toBe("2026-03-29T01:00:00.000Z");
    expect(iso(nextDue(daily, at("2026-03-29T01:00:00Z")))).toBe("2026-03-30T00:30:00.000Z");
  });

  it("runs a job due in the repeated hour once at the fall-back", () => {
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    const due = dueBetween(daily, at("2026-10-24T12:00:00Z"), at("2026-10-26T12:00:00Z")).due;
    expect(due.map(iso)).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  it("runs an hourly job at every real hour across the fall-back (25 runs that day)", () => {
    const hourly = { schedule: "0 * * * *", timezone: "Europe/Berlin" };
    const { due } = dueBetween(hourly, at("2026-10-24T21:59:00Z"), at("2026-10-25T22:59:00Z"));
    expect(due).toHaveLength(25);
  });

  it("bounds a long gap of a frequent job to the newest due times", () => {
    const { due, uncounted } = dueBetween(
      { schedule: "* * * * * *" },
      at("2026-01-01T00:00:00Z"),
      at("2026-01-02T00:00:00Z"),
    );
    expect(uncounted).toBe(true);
    expect(due).toHaveLength(MAX_RECORDED_DUE);
    expect(iso(due.at(-1)!)).toBe("2026-01-02T00:00:00.000Z");
  });

  it("gives each job and profile a fixed jitter within the bound", () => {
    const job = { name: "backup", jitterMs: 60_000 };
    const offsets = ["a", "b", "c", "d", "e"].map((p) => jitterFor(job, p));
    expect(offsets.map((_, i) => jitterFor(job, ["a", "b", "c", "d", "e"][i]!))).toEqual(offsets);
    for (const o of offsets) {
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThanOrEqual(60_000);
    }
    expect(new Set(offsets).size).toBeGreaterThan(1);
    expect(jitterFor({ name: "backup", jitterMs: 0 }, "a")).toBe(0);
  });

  it("rejects bad cron expressions, unknown time zones and command jobs without a command", () => {
    const bad = (job: Record<string, unknown>) =>
      configSchema().safeParse({ scheduler: { jobs: [job] } }).success;
    expect(bad({ name: "x", schedule: "61 * * * *", kind: "backup" })).toBe(false);
    expect(
      bad({ name: "x", schedule: "0 3 * * *", kind: "backup", timezone: "Mars/Olympus" }),
    ).toBe(false);
    expect(bad({ name: "x", schedule: "0 3 * * *", kind: "command" })).toBe(false);
    expect(bad({ name: "x", schedule: "0 3 * * *", kind: "backup" })).toBe(true);
  });
});

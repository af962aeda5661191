import { describe, expect, it } from "vitest";
import { planDue } from "../../../src/scheduler/catch-up.js";

/** Every minute, on the minute; times are whole minutes after T. */
const job = { schedule: "* * * * *", timezone: "UTC", catchUp: true };
const T = Date.parse("2030-01-01T00:00:00.000Z");
const min = (n: number) => T + n * 60_000;
const idle = { startup: false, busy: undefined };

describe("scheduler: what a job does with its due times (planDue)", () => {
  it("nothing due: nothing recorded, nothing run, the place kept", () => {
    expect(planDue(job, min(0), min(0) + 59_000, idle)).toEqual({
      lastHandled: min(0),
      notRun: [],
      run: undefined,
    });
  });

  it("one due time, on time: it runs as scheduled", () => {
    const plan = planDue(job, min(0), min(1) + 5, idle);
    expect(plan).toEqual({
      lastHandled: min(1),
      notRun: [],
      run: { scheduledAt: min(1), trigger: "schedule" },
    });
  });

  it("at startup, the due time passed while no scheduler ran is a catch-up", () => {
    const plan = planDue(job, min(0), min(1) + 5, { startup: true, busy: undefined });
    expect(plan.run).toEqual({ scheduledAt: min(1), trigger: "catch-up" });
    expect(plan.notRun).toEqual([]);
  });

  it("a gap: the newest runs once as a catch-up, the older ones are recorded missed", () => {
    const plan = planDue(job, min(0), min(3) + 5, idle);
    expect(plan.lastHandled).toBe(min(3));
    expect(plan.run).toEqual({ scheduledAt: min(3), trigger: "catch-up" });
    expect(plan.notRun.map((n) => [n.scheduledAt, n.outcome, n.trigger])).toEqual([
      [min(1), "missed", "catch-up"],
      [min(2), "missed", "catch-up"],
    ]);
    expect(plan.notRun[0]!.note).toMatch(/^the scheduler was late at this time/);
    const atStart = planDue(job, min(0), min(3) + 5, { startup: true, busy: undefined });
    expect(atStart.notRun[0]!.note).toMatch(/^no scheduler ran at this time/);
  });

  it("catch-up off: a late due time is recorded missed, not run; an on-time one still runs", () => {
    const off = { ...job, catchUp: false };
    const late = planDue(off, min(0), min(2) + 5, idle);
    expect(late.run).toBeUndefined();
    expect(late.notRun.map((n) => [n.scheduledAt, n.outcome, n.note])).toEqual([
      [min(1), "missed", expect.stringMatching(/^the scheduler was late/)],
      [min(2), "missed", "catch-up is off for this job"],
    ]);
    expect(planDue(off, min(0), min(1) + 5, idle).run).toEqual({
      scheduledAt: min(1),
      trigger: "schedule",
    });
  });

  it("runs never overlap: a due time while the previous run goes on is recorded skipped, naming its worker", () => {
    const plan = planDue(job, min(0), min(1) + 5, { startup: false, busy: { pid: 4242 } });
    expect(plan.run).toBeUndefined();
    expect(plan.lastHandled).toBe(min(1));
    expect(plan.notRun).toEqual([
      {
        scheduledAt: min(1),
        outcome: "skipped",
        trigger: "schedule",
        note: "the previous run of this job is still in progress (worker pid 4242)",
      },
    ]);
    // Not started yet (waiting for its turn on the profile): no pid to name.
    const waiting = planDue(job, min(0), min(2) + 5, {
      startup: false,
      busy: { pid: undefined },
    });
    expect(waiting.notRun.at(-1)).toMatchObject({
      outcome: "skipped",
      trigger: "catch-up",
      note: "the previous run of this job is still in progress",
    });
  });

  it("a gap longer than the bound records the newest due times and says the rest are not", () => {
    const plan = planDue(job, min(0), min(500) + 5, idle);
    expect(plan.run).toEqual({ scheduledAt: min(500), trigger: "catch-up" });
    expect(plan.notRun).toHaveLength(99);
    expect(plan.notRun[0]!.note).toMatch(/earlier due times of this gap are not recorded$/);
    expect(plan.notRun[1]!.note).not.toMatch(/not recorded/);
  });
});

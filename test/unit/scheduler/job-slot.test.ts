import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import type { NotRun, Trigger } from "../../../src/scheduler/catch-up.js";
import { JobSlot, type RunHandle, type SlotRuns } from "../../../src/scheduler/job-slot.js";

const T = Date.parse("2030-01-01T00:00:00.000Z");
const job = configSchema().parse({
  scheduler: { jobs: [{ name: "tick", schedule: "* * * * * *", kind: "reap-idle" }] },
}).scheduler.jobs[0]!;

/** The scheduler's side, kept in memory: what was recorded, what was launched (each settles on demand). */
function fakeRuns() {
  const recorded: NotRun[] = [];
  const launched: { scheduledAt: number; trigger: Trigger; run: RunHandle; end(): void }[] = [];
  const runs: SlotRuns = {
    stopping: () => false,
    record: (_slot, entry) => void recorded.push(entry),
    launch: (_slot, scheduledAt, trigger, run) =>
      new Promise<void>((resolve) => {
        launched.push({ scheduledAt, trigger, run, end: resolve });
      }),
  };
  return { runs, recorded, launched };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("scheduler: a job slot", () => {
  it("runs each due time on its timer, and records one skipped while its run goes on", async () => {
    const { runs, recorded, launched } = fakeRuns();
    const slot = new JobSlot(job, "default", T - 1000, runs);
    slot.tick(false);
    expect(launched.map((l) => [l.scheduledAt, l.trigger])).toEqual([[T, "schedule"]]);
    expect(slot.inFlight).toBeDefined();
    launched[0]!.run.started(7, 4242);
    expect(slot.running).toEqual({ id: 7, pid: 4242 });

    await vi.advanceTimersByTimeAsync(1000);
    expect(launched).toHaveLength(1);
    expect(recorded).toEqual([
      {
        scheduledAt: T + 1000,
        outcome: "skipped",
        trigger: "schedule",
        note: "the previous run of this job is still in progress (worker pid 4242)",
      },
    ]);

    launched[0]!.run.ended();
    launched[0]!.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(slot.inFlight).toBeUndefined();
    expect(slot.running).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(launched.map((l) => l.scheduledAt)).toEqual([T, T + 2000]);
    expect(slot.lastHandled).toBe(T + 2000);
    slot.disarm();
  });

  it("a slot that replaces another (config reloaded) takes over its run: skips while it goes on, runs again once it ended", async () => {
    const { runs, recorded, launched } = fakeRuns();
    const old = new JobSlot(job, "default", T - 1000, runs);
    old.tick(false);
    old.disarm();
    launched[0]!.run.started(7, 4242);
    const slot = new JobSlot(job, "default", old.lastHandled, runs);
    slot.adopt(old);
    expect(slot.running).toEqual({ id: 7, pid: 4242 });
    slot.arm();

    await vi.advanceTimersByTimeAsync(1000);
    expect(recorded.map((r) => [r.scheduledAt, r.outcome])).toEqual([[T + 1000, "skipped"]]);
    launched[0]!.run.ended();
    launched[0]!.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(slot.inFlight).toBeUndefined();
    expect(slot.running).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(launched.map((l) => l.scheduledAt)).toEqual([T, T + 2000]);
    expect(recorded).toHaveLength(1);
    slot.disarm();
  });

  it("does nothing once the scheduler stops", async () => {
    const { runs, recorded, launched } = fakeRuns();
    let stopping = false;
    const slot = new JobSlot(job, "default", T - 1000, { ...runs, stopping: () => stopping });
    slot.arm();
    stopping = true;
    await vi.advanceTimersByTimeAsync(5000);
    expect(launched).toEqual([]);
    expect(recorded).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { drainRuns } from "../../../src/scheduler/drain.js";
import { JobSlot, type RunHandle } from "../../../src/scheduler/job-slot.js";
import type { Log } from "../../../src/scheduler/log.js";

const job = configSchema().parse({
  scheduler: { jobs: [{ name: "slow", schedule: "* * * * * *", kind: "reap-idle" }] },
}).scheduler.jobs[0]!;

/** A slot whose one run started (worker `pid`) and ends when `end()` is called. */
function runningSlot(id: number, pid: number) {
  let end = () => {};
  let handle: RunHandle | undefined;
  const slot = new JobSlot(job, `p${id}`, Date.now() - 1000, {
    stopping: () => false,
    record: () => {},
    launch: (_s, _at, _t, run) =>
      new Promise<void>((resolve) => {
        handle = run;
        end = () => {
          run.ended();
          resolve();
        };
      }),
  });
  slot.tick(false);
  slot.disarm();
  handle!.started(id, pid);
  return { slot, end: () => end() };
}

function memoryLog() {
  const lines: Record<string, unknown>[] = [];
  const log: Log = {
    info: (f) => void lines.push(f),
    warn: (f) => void lines.push(f),
    error: (f) => void lines.push(f),
  };
  return { log, lines };
}

describe("scheduler: drain", () => {
  it("waits for runs that end within drainMs; records the others abandoned, naming their worker", async () => {
    const quick = runningSlot(1, 1001);
    const stuck = runningSlot(2, 1002);
    const abandoned: [string, number, string][] = [];
    const { log, lines } = memoryLog();
    setTimeout(() => quick.end(), 20);
    const started = Date.now();
    const ids = await drainRuns([quick.slot, stuck.slot], {
      drainMs: 300,
      abandon: async (slot, id, note) => void abandoned.push([slot.profile, id, note]),
      log,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(ids).toEqual([2]);
    expect(abandoned).toEqual([
      ["p2", 2, "the scheduler stopped after 300 ms while worker pid 1002 still ran; not replayed"],
    ]);
    expect(lines).toEqual([
      { event: "run.abandoned", job: "slow", profile: "p2", run: 2, pid: 1002 },
    ]);
    stuck.end();
  });

  it("returns as soon as every run ended, and logs a run it could not record", async () => {
    const a = runningSlot(1, 1001);
    setTimeout(() => a.end(), 10);
    const started = Date.now();
    expect(
      await drainRuns([a.slot], { drainMs: 10_000, abandon: async () => {}, log: memoryLog().log }),
    ).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);

    const b = runningSlot(2, 1002);
    const { log, lines } = memoryLog();
    const ids = await drainRuns([b.slot], {
      drainMs: 10,
      abandon: async () => {
        throw new Error("store gone");
      },
      log,
    });
    expect(ids).toEqual([]);
    expect(lines).toEqual([
      { event: "run.unrecorded", job: "slow", profile: "p2", run: 2, err: "Error: store gone" },
    ]);
    b.end();
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { openStore, type Store } from "../../../src/index.js";
import { HealthTracker } from "../../../src/scheduler/job-health.js";
import { tempHome } from "../../helpers/home.js";

/**
 * The health tracker reads each profile's recorded runs (a real store in a
 * temp home) and says what /status reports and when a job is alerted on.
 */
const job = configSchema().parse({
  scheduler: { jobs: [{ name: "backup", schedule: "0 3 * * *", kind: "backup" }] },
}).scheduler.jobs[0]!;
const launcher = { pid: process.pid, startTicks: 1, bootId: "test-boot" };

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function finishedRun(s: Store, at: number, outcome: "ok" | "failed" | "refused") {
  const began = await s.runs.begin(
    { job: "backup", profile: "default", trigger: "schedule", scheduledAt: at, launcher },
    () => false,
  );
  if (!began.started) throw new Error("the run did not begin");
  await s.runs.finish(began.id, {
    outcome,
    exitCode: outcome === "ok" ? 0 : 1,
    ...(outcome === "refused" ? { errorCode: "HEARTH_STORE_HELD" } : {}),
  });
}

describe("scheduler: the health tracker", () => {
  it("alerts once a job has failed alertAfter times in a row, and stops after a success", async () => {
    const s = await openStore({ home: tempHome() });
    store = s;
    const health = new HealthTracker(async () => s.runs.health());
    const shown = [{ job, profile: "default", running: undefined }];
    const now = Date.parse("2030-01-10T12:00:00.000Z");

    await health.refresh("default");
    expect(health.get("backup", "default")).toBeUndefined();
    expect(health.status(shown, 2, now)[0]).toMatchObject({
      lastOutcome: null,
      consecutiveFailures: 0,
      failing: false,
      periodsSinceSuccess: null,
    });

    await finishedRun(s, Date.parse("2030-01-01T03:00:00Z"), "failed");
    await health.refresh("default");
    expect(health.failing("backup", "default", "failed", 2)).toBeUndefined();
    expect(health.status(shown, 2, now)[0]!.failing).toBe(false);

    // Skipped and missed due times are not failures.
    await s.runs.record({
      job: "backup",
      profile: "default",
      trigger: "schedule",
      scheduledAt: Date.parse("2030-01-02T03:00:00Z"),
      outcome: "skipped",
    });
    await health.refresh("default");
    expect(health.get("backup", "default")!.consecutiveFailures).toBe(1);

    await finishedRun(s, Date.parse("2030-01-03T03:00:00Z"), "refused");
    await health.refresh("default");
    expect(health.failing("backup", "default", "refused", 2)).toMatchObject({
      consecutiveFailures: 2,
      lastOutcome: "refused",
      lastErrorCode: "HEARTH_STORE_HELD",
    });
    // A run that succeeded is never alerted on, whatever the count read.
    expect(health.failing("backup", "default", "ok", 2)).toBeUndefined();
    expect(health.status(shown, 2, now)[0]).toMatchObject({ failing: true, alertAfter: 2 });
    expect(health.status(shown, 3, now)[0]!.failing).toBe(false);

    await finishedRun(s, Date.parse("2030-01-04T03:00:00Z"), "ok");
    await health.refresh("default");
    expect(health.failing("backup", "default", "failed", 1)).toBeUndefined();
    const after = health.status(shown, 2, now)[0]!;
    expect(after).toMatchObject({ lastOutcome: "ok", consecutiveFailures: 0, failing: false });
    expect(after.lastSuccessAt).not.toBeNull();
  });

  it("status shows the run in progress and the next due time", async () => {
    const s = await openStore({ home: tempHome() });
    store = s;
    const health = new HealthTracker(async () => s.runs.health());
    const now = Date.parse("2030-01-10T12:00:00.000Z");
    const [st] = health.status(
      [{ job: { ...job, timezone: "UTC" }, profile: "default", running: { id: 9, pid: 123 } }],
      3,
      now,
    );
    expect(st).toMatchObject({
      job: "backup",
      profile: "default",
      kind: "backup",
      running: { run: 9, pid: 123 },
      nextDue: "2030-01-11T03:00:00.000Z",
    });
  });
});

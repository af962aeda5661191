import { describe, expect, it } from "vitest";
import type { BeginRun, RunProcess } from "../../src/store/runs.js";
import { backends } from "./pg-modules.js";

const BOOT = "boot-a";
const launcher = (pid: number, bootId = BOOT): RunProcess => ({
  pid,
  startTicks: pid * 10,
  bootId,
});
const AT = Date.UTC(2026, 0, 1, 3, 0);
/** A scheduled run of `job` by launcher `pid`, due at its own minute (one run per due time). */
const beginOf = (job: string, pid: number, extra: Partial<BeginRun> = {}): BeginRun => ({
  job,
  profile: "default",
  trigger: "schedule",
  scheduledAt: AT + pid * 60_000,
  launcher: launcher(pid),
  ...extra,
});
const alive = () => true;
const dead = () => false;

describe.each(backends)("job runs (M4) on $name", (backend) => {
  it("begins a run, refuses a second while the first may be alive, and records how it ended", async () => {
    const m = await backend.open();
    const first = await m.runs.begin(beginOf("backup", 100), alive);
    if (!first.started) throw new Error("expected the first run to start");
    expect(first.id).toEqual(expect.any(Number));
    const run = await m.runs.get(first.id);
    expect(run).toMatchObject({
      id: first.id,
      job: "backup",
      profile: "default",
      trigger: "schedule",
      attempt: 1,
      scheduledAt: new Date(AT + 100 * 60_000).toISOString(),
      finishedAt: null,
      outcome: "running",
      worker: null,
      launcher: { pid: 100, startTicks: 1000 },
      bootId: BOOT,
      holders: [],
    });
    expect(typeof run?.startedAt).toBe("string");
    // Refused while the launcher may live; the blocking run is reported.
    const seen: RunProcess[] = [];
    const watch = (p: RunProcess) => seen.push(p) > 0;
    const second = await m.runs.begin(beginOf("backup", 200), watch);
    expect(second).toMatchObject({
      started: false,
      blocking: { id: first.id, outcome: "running" },
    });
    expect(seen).toEqual([launcher(100)]);
    // Once it has a worker, the worker's identity is what may be alive.
    await m.runs.attachWorker(first.id, { pid: 101, startTicks: 1010 });
    expect((await m.runs.get(first.id))?.worker).toEqual({ pid: 101, startTicks: 1010 });
    seen.length = 0;
    expect((await m.runs.begin(beginOf("backup", 200), watch)).started).toBe(false);
    expect(seen).toEqual([{ pid: 101, startTicks: 1010, bootId: BOOT }]);
    // Another job, or a run from another boot, does not block.
    expect((await m.runs.begin(beginOf("prune", 300), alive)).started).toBe(true);
    expect(
      (await m.runs.begin(beginOf("backup", 400, { launcher: launcher(400, "boot-b") }), alive))
        .started,
    ).toBe(true);

    await m.runs.finish(first.id, {
      outcome: "refused",
      exitCode: 3,
      errorCode: "HEARTH_GATE_HELD",
      holders: [{ pid: 7, kind: "gateway", commandLine: "hearth gateway run", since: null }],
      note: "held",
      outputTail: "refusing",
    });
    const finished = await m.runs.get(first.id);
    expect(finished).toMatchObject({
      outcome: "refused",
      exitCode: 3,
      signal: null,
      errorCode: "HEARTH_GATE_HELD",
      holders: [{ pid: 7, kind: "gateway", commandLine: "hearth gateway run", since: null }],
      note: "held",
      outputTail: "refusing",
    });
    expect(finished?.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof finished?.durationMs).toBe("number");
    expect(Date.parse(finished!.finishedAt!)).toBeGreaterThanOrEqual(
      Date.parse(finished!.startedAt!),
    );
    // Finished: it blocks nobody.
    expect((await m.runs.begin(beginOf("backup", 500), alive)).started).toBe(true);
    // A worker attached to a finished run changes nothing.
    await m.runs.attachWorker(first.id, { pid: 999, startTicks: 1 });
    expect((await m.runs.get(first.id))?.worker).toEqual({ pid: 101, startTicks: 1010 });
  });

  it("a run whose process is dead does not block; orphans become unknown, never replayed", async () => {
    const m = await backend.open();
    const a = await m.runs.begin(beginOf("backup", 100), alive);
    const b = await m.runs.begin(beginOf("prune", 200), alive);
    if (!a.started || !b.started) throw new Error("expected both to start");
    await m.runs.attachWorker(b.id, { pid: 201, startTicks: 2010 });
    const orphans = await m.runs.markOrphans((p) => p.pid === 100);
    expect(orphans.map((r) => [r.id, r.outcome])).toEqual([[a.id, "unknown"]]);
    const marked = await m.runs.get(a.id);
    expect(marked?.outcome).toBe("unknown");
    expect(marked?.note).toBe(
      "its launcher (pid 100) died while it ran before its worker started; not replayed",
    );
    expect((await m.runs.get(b.id))?.outcome).toBe("running");
    // An unknown run blocks while its process may be alive, not once it is dead.
    expect((await m.runs.begin(beginOf("backup", 300), alive)).started).toBe(false);
    const d = await m.runs.begin(beginOf("backup", 300), dead);
    if (!d.started) throw new Error("expected a start");
    const all = await m.runs.markOrphans(() => true);
    expect(all.map((r) => r.id).sort((x, y) => x - y)).toEqual([b.id, d.id].sort((x, y) => x - y));
    expect(all.every((r) => r.outcome === "unknown")).toBe(true);
    expect((await m.runs.get(b.id))?.note).toBe(
      "its launcher (pid 200) died while it ran in worker pid 201; not replayed",
    );
    // abandon() only turns a running run unknown.
    const c = await m.runs.begin(beginOf("vacuum", 400), alive);
    if (!c.started) throw new Error("expected a start");
    await m.runs.abandon(c.id, "worker outlived the patience");
    expect(await m.runs.get(c.id)).toMatchObject({
      outcome: "unknown",
      note: "worker outlived the patience",
    });
    await m.runs.finish(c.id, { outcome: "ok" });
    await m.runs.abandon(c.id, "late");
    expect(await m.runs.get(c.id)).toMatchObject({ outcome: "ok", note: null });
  });

  it("records missed and skipped due times; lastScheduled ignores manual runs", async () => {
    const m = await backend.open();
    expect(await m.runs.lastScheduled("backup", "default")).toBeNull();
    const missed = await m.runs.record({
      job: "backup",
      profile: "default",
      trigger: "catch-up",
      scheduledAt: 1_000,
      outcome: "missed",
      note: "down",
    });
    const skipped = await m.runs.record({
      job: "backup",
      profile: "default",
      trigger: "schedule",
      scheduledAt: 2_000,
      outcome: "skipped",
    });
    if (missed === null || skipped === null) throw new Error("expected both recorded");
    expect(await m.runs.get(missed)).toMatchObject({
      outcome: "missed",
      errorCode: null,
      note: "down",
      startedAt: null,
    });
    expect(await m.runs.get(skipped)).toMatchObject({
      outcome: "skipped",
      errorCode: "HEARTH_JOB_RUNNING",
    });
    await m.runs.begin(beginOf("backup", 1, { trigger: "manual", scheduledAt: 9_000 }), alive);
    expect(await m.runs.lastScheduled("backup", "default")).toBe(2_000);
    expect(await m.runs.lastScheduled("backup", "other")).toBeNull();
    expect(await m.runs.get(123_456)).toBeNull();
  });

  it("lists newest first, by job, up to a validated limit", async () => {
    const m = await backend.open();
    const ids: number[] = [];
    for (const [i, job] of ["a", "b", "a", "b", "a"].entries()) {
      const id = await m.runs.record({
        job,
        profile: "default",
        trigger: "schedule",
        scheduledAt: i + 1,
        outcome: "missed",
      });
      if (id === null) throw new Error("expected a record");
      ids.push(id);
    }
    expect((await m.runs.list()).map((r) => r.id)).toEqual([...ids].reverse());
    expect((await m.runs.list({ job: "a" })).map((r) => r.id)).toEqual([ids[4], ids[2], ids[0]]);
    expect((await m.runs.list({ limit: 2 })).map((r) => r.id)).toEqual([ids[4], ids[3]]);
    for (const limit of [0, -1, 1.5, Number.NaN])
      await expect(m.runs.list({ limit })).rejects.toBeInstanceOf(RangeError);
  });

  it("health: last outcome, last success and the failures since it, per job", async () => {
    const m = await backend.open();
    let pid = 0;
    const run = async (job: string, outcome: "ok" | "failed" | "refused", errorCode?: string) => {
      const r = await m.runs.begin(beginOf(job, ++pid), dead);
      if (!r.started) throw new Error("expected a start");
      await m.runs.finish(r.id, { outcome, errorCode: errorCode ?? null });
    };
    await run("backup", "failed");
    await run("backup", "ok");
    await run("backup", "refused", "HEARTH_GATE_HELD");
    await run("backup", "failed", "HEARTH_NO_SPACE");
    await m.runs.record({
      job: "backup",
      profile: "default",
      trigger: "schedule",
      scheduledAt: 5,
      outcome: "skipped",
    });
    await run("prune", "refused", "HEARTH_GATE_HELD");
    const health = await m.runs.health();
    expect(health).toEqual([
      {
        job: "backup",
        profile: "default",
        lastOutcome: "failed",
        lastScheduledAt: new Date(AT + 4 * 60_000).toISOString(),
        lastSuccessAt: expect.any(String),
        consecutiveFailures: 2,
        lastErrorCode: "HEARTH_NO_SPACE",
      },
      {
        job: "prune",
        profile: "default",
        lastOutcome: "refused",
        lastScheduledAt: new Date(AT + 5 * 60_000).toISOString(),
        lastSuccessAt: null,
        consecutiveFailures: 1,
        lastErrorCode: "HEARTH_GATE_HELD",
      },
    ]);
  });

  it("an error thrown by the liveness callback reaches the caller as thrown; nothing is recorded", async () => {
    const m = await backend.open();
    const first = await m.runs.begin(beginOf("backup", 100), alive);
    if (!first.started) throw new Error("expected a start");
    const boom = new Error("cannot read /proc");
    const thrower = () => {
      throw boom;
    };
    await expect(m.runs.begin(beginOf("backup", 200), thrower)).rejects.toBe(boom);
    await expect(m.runs.markOrphans(thrower)).rejects.toBe(boom);
    expect((await m.runs.list()).map((r) => [r.id, r.outcome])).toEqual([[first.id, "running"]]);
  });

  it("two connections beginning one job at once: one run starts, the other is blocked by it", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    for (let round = 0; round < 10; round++) {
      const job = `job-${round}`;
      const results = await Promise.all(
        [m, other, m, other].map((x, i) => x.runs.begin(beginOf(job, 10 + i), alive)),
      );
      const started = results.filter((r) => r.started);
      expect(started, `round ${round}`).toHaveLength(1);
      expect((await m.runs.list({ job })).length).toBe(1);
    }
  });
});

describe.each(backends)("one record per due time, on every host (M4) on $name", (backend) => {
  const other = (pid: number, bootId: string) => ({ launcher: launcher(pid, bootId) });

  it("a due time a scheduler recorded is claimed: no second run or record; manual runs and retries are not claims", async () => {
    const m = await backend.open();
    const at = AT + 60_000;
    const due = { job: "backup", profile: "default", trigger: "schedule" as const };
    const missed = await m.runs.record({ ...due, scheduledAt: at, outcome: "missed" });
    expect(missed).toEqual(expect.any(Number));
    expect(await m.runs.record({ ...due, scheduledAt: at, outcome: "skipped" })).toBeNull();
    expect(
      await m.runs.record({ ...due, trigger: "catch-up", scheduledAt: at, outcome: "missed" }),
    ).toBeNull();
    expect(
      await m.runs.record({ ...due, profile: "p2", scheduledAt: at, outcome: "missed" }),
    ).toEqual(expect.any(Number));
    const claimed = await m.runs.begin(beginOf("backup", 7, { scheduledAt: at }), alive);
    expect(claimed).toMatchObject({ started: false, claimedBy: { id: missed, outcome: "missed" } });
    const manual = await m.runs.begin(
      beginOf("backup", 8, { scheduledAt: at, trigger: "manual" }),
      dead,
    );
    expect(manual.started).toBe(true);

    const first = await m.runs.begin(beginOf("prune", 9), dead);
    if (!first.started) throw new Error("expected a start");
    // Another host (another boot: it does not block) handling the same due time.
    const second = await m.runs.begin(beginOf("prune", 9, other(9, "boot-b")), dead);
    expect(second).toMatchObject({ started: false, claimedBy: { id: first.id } });
    await m.runs.finish(first.id, { outcome: "failed" });
    const retry = await m.runs.begin(beginOf("prune", 9, { trigger: "retry", attempt: 2 }), dead);
    expect(retry.started).toBe(true);
    expect((await m.runs.list({ job: "prune" })).map((r) => r.trigger)).toEqual([
      "retry",
      "schedule",
    ]);
  });

  it("schedulers of several hosts beginning one due time at once: one run, the others see its claim", async () => {
    const m = await backend.open();
    const again = await m.reopen();
    for (let round = 0; round < 8; round++) {
      const job = `job-${round}`;
      const results = await Promise.all(
        [m, again, m, again].map((x, i) =>
          x.runs.begin(beginOf(job, 50, other(50 + i, `boot-${i}`)), dead),
        ),
      );
      const started = results.filter((r) => r.started);
      expect(started, `round ${round}`).toHaveLength(1);
      const id = (started[0] as { id: number }).id;
      for (const r of results.filter((x) => !x.started))
        expect(r).toMatchObject({ started: false, claimedBy: { id } });
      expect((await m.runs.list({ job })).length).toBe(1);
    }
  });

  it("a run of another boot blocks while the server holds its launcher's presence (PostgreSQL); then it is abandoned once", async () => {
    const m = await backend.open();
    const hostB = launcher(100, "boot-b");
    const release = await m.runs.holdPresence(hostB);
    const a = await m.runs.begin(beginOf("backup", 100, { launcher: hostB }), dead);
    if (!a.started) throw new Error("expected a start");
    const fromA = await m.runs.begin(beginOf("backup", 200), dead);
    // Not an orphan for anyone while present.
    const orphans = await m.runs.markOrphans(() => true);
    await release();
    if (backend.name === "sqlite") {
      // One host by design: a run of another boot is over.
      expect(fromA.started).toBe(true);
      expect(orphans.map((r) => r.id)).toContain(a.id);
      return;
    }
    expect(fromA).toMatchObject({ started: false, blocking: { id: a.id, outcome: "running" } });
    expect(orphans).toEqual([]);
    // Its launcher's connection is gone: the next due time abandons it and runs.
    const next = await m.runs.begin(beginOf("backup", 300), dead);
    expect(next.started).toBe(true);
    const abandoned = await m.runs.get(a.id);
    expect(abandoned?.outcome).toBe("unknown");
    expect(abandoned?.note).toMatch(/^abandoned: .*boot-b.*not replayed$/);
    if (!next.started) return;
    await m.runs.finish(next.id, { outcome: "ok" });
    const later = await m.runs.begin(beginOf("backup", 400), dead);
    expect(later.started).toBe(true);
    expect((await m.runs.get(a.id))?.note).toBe(abandoned?.note);
  });
});

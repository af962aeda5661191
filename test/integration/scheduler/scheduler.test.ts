import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { liveness, readBootId } from "../../../src/process/identity.js";
import type { JobRun } from "../../../src/store/runs.js";
import { runCli } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { SchedulerChild, startScheduler, untilRuns, writeJobs } from "../../helpers/scheduler.js";

const finished = (r: JobRun) => r.outcome !== "running";
/** Launched and finished. A run that came due while the previous one still ran is recorded
 * "skipped" (the overlap rule, tested on its own): on a loaded machine a job due every second
 * can take longer than a second. */
const ran = (r: JobRun) => finished(r) && r.outcome !== "skipped";
const EVERY_SECOND = "* * * * * *";

/** begin/end lines a job writes around its work: overlapping runs interleave them. */
function assertNoOverlap(file: string): number {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  let open: string | undefined;
  let completed = 0;
  for (const line of lines) {
    const [what, pid] = line.split(" ");
    if (what === "begin") {
      expect(open, `run ${pid} began while run ${open} was still going`).toBeUndefined();
      open = pid;
    } else {
      expect(pid).toBe(open);
      open = undefined;
      completed++;
    }
  }
  return completed;
}

describe("hearth scheduler run", () => {
  it("runs a job due every second in real workers and records each run ok", async () => {
    const home = tempHome();
    writeJobs(home, [{ name: "reap", schedule: EVERY_SECOND, kind: "reap-idle" }]);
    const s = await startScheduler(home);
    const runs = await untilRuns(home, "two finished runs", (r) => r.filter(ran).length >= 2);
    for (const run of runs.filter(ran)) {
      expect(run).toMatchObject({ job: "reap", profile: "default", outcome: "ok", exitCode: 0 });
      expect(run.worker?.pid).toBeGreaterThan(0);
      expect(run.worker?.pid).not.toBe(s.pid);
      expect(run.launcher?.pid).toBe(s.pid);
      expect(run.bootId).toBe(readBootId());
      expect(Date.parse(run.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(run.startedAt!));
      expect(run.note).toMatch(/^reap-idle: /);
    }
    expect(await s.process.stop()).toEqual({ code: 0, signal: null });
    expect(s.process.lines.map((l) => JSON.parse(l).event)).toEqual([
      "scheduler.ready",
      "scheduler.stopped",
    ]);
    // Nothing of the scheduler or its workers holds the store afterwards.
    const ps = await runCli(["--json", "ps"], { home });
    expect(ps.json().profiles[0].holders).toEqual([]);
  });

  it("records a scheduled optimize refused while a gateway holds the store, naming the gateway (seed 004)", async () => {
    const home = tempHome();
    // Without a maintenance window, as the job in the field report ran.
    const job = { name: "optimize", schedule: EVERY_SECOND, kind: "optimize", window: false };
    writeJobs(home, [job], {
      alertAfter: 2,
    });
    const gateway = await startGateway(home);
    const s = await startScheduler(home);
    const runs = await untilRuns(home, "two refused runs", (r) => r.filter(ran).length >= 2);
    for (const run of runs.filter(ran)) {
      expect(run.outcome).toBe("refused");
      expect(run.exitCode).toBe(3);
      expect(run.errorCode).toBe("HEARTH_STORE_HELD");
      expect(run.holders.map((h) => [h.pid, h.kind])).toContainEqual([gateway.pid, "gateway"]);
      expect(run.outputTail).toContain(String(gateway.pid));
    }
    // Alerting: an error log line, the status endpoint and doctor all say so.
    await until("the job.failing log line", () => s.logs("job.failing").length > 0);
    expect(s.logs("job.failing")[0]).toMatchObject({
      level: 50,
      job: "optimize",
      lastOutcome: "refused",
    });
    const status = (await (await fetch(`${s.address}/status`)).json()) as {
      jobs: Record<string, unknown>[];
    };
    expect(status.jobs[0]).toMatchObject({
      job: "optimize",
      lastOutcome: "refused",
      lastSuccessAt: null,
      failing: true,
    });
    const metrics = await (await fetch(`${s.address}/metrics`)).text();
    expect(metrics).toContain(
      'hearth_job_last_outcome{job="optimize",profile="default",outcome="refused"} 1',
    );
    expect(metrics).toContain(
      'hearth_job_last_success_timestamp_seconds{job="optimize",profile="default"} 0',
    );
    const doctor = await runCli(["--json", "doctor"], { home });
    const finding = doctor.json().findings.find((f: { code: string }) => f.code === "job_failing");
    expect(finding).toMatchObject({ severity: "error" });
    expect(finding.message).toContain("optimize");
    expect(doctor.code).toBe(4);
    await s.process.stop();
    await gateway.process.stop();
  });

  it("runs a scheduled optimize through a maintenance window beside a live gateway: recorded ok", async () => {
    const home = tempHome();
    writeJobs(home, [{ name: "optimize", schedule: EVERY_SECOND, kind: "optimize" }]);
    const gateway = await startGateway(home);
    const s = await startScheduler(home);
    // Waited for in the scheduler's log, not by polling the store: a reader
    // in this process is a holder the window cannot park, and would be named.
    await until("a run that finished", () => s.logs("run.finished").length >= 1);
    const runs = await untilRuns(home, "a run that ran", (r) => r.filter(ran).length >= 1);
    const run = runs.filter(ran)[0]!;
    expect(run.outcome, JSON.stringify(run)).toBe("ok");
    expect(run.exitCode).toBe(0);
    expect(gateway.logEvents("window.parked").length).toBeGreaterThanOrEqual(1);
    await until("the gateway resumed", () => gateway.logEvents("window.resumed").length >= 1);
    expect((await gateway.post({ platform: "t", chat: "c", content: "after" })).status).toBe(200);
    await s.process.stop();
    await gateway.process.stop();
  });

  it("records a worker killed mid-run as failed, and skips the due times while it ran", async () => {
    const home = tempHome();
    writeJobs(home, [
      { name: "slow", schedule: EVERY_SECOND, kind: "command", command: "sleep 30" },
    ]);
    const s = await startScheduler(home);
    const [run] = await untilRuns(home, "a running worker", (r) =>
      r.some((x) => x.worker !== null),
    );
    await untilRuns(home, "a skipped due time", (r) => r.some((x) => x.outcome === "skipped"));
    process.kill(-run!.worker!.pid, "SIGKILL"); // the worker's process group: the worker and its sleep
    const runs = await untilRuns(
      home,
      "the killed run finished",
      (r) => r.find((x) => x.id === run!.id)!.outcome !== "running",
    );
    const killed = runs.find((x) => x.id === run!.id)!;
    expect(killed).toMatchObject({ outcome: "failed", signal: "SIGKILL", exitCode: null });
    expect(killed.note).toContain("killed by SIGKILL");
    for (const skipped of runs.filter((x) => x.outcome === "skipped")) {
      expect(skipped.note).toContain("still in progress");
      expect(skipped.errorCode).toBe("HEARTH_JOB_RUNNING");
    }
    await s.process.stop();
  });

  it("never runs one job twice at once when it takes longer than its period", async () => {
    const home = tempHome();
    const file = join(home, "..", "overlap.log");
    writeJobs(home, [
      {
        name: "slow",
        schedule: EVERY_SECOND,
        kind: "command",
        command: `echo "begin $$" >> ${file}; sleep 1.5; echo "end $$" >> ${file}`,
      },
    ]);
    const s = await startScheduler(home);
    // Two runs ok, each 1.5 s over its period: a due time came while each ran
    // (a skip is asserted), and the second began only after the first ended.
    // (Three took 2 s more, a run and its skip, and crossed nothing new.)
    const runs = await untilRuns(
      home,
      "two ok runs",
      (r) => r.filter((x) => x.outcome === "ok").length >= 2,
    );
    await s.process.stop();
    expect(assertNoOverlap(file)).toBeGreaterThanOrEqual(2);
    expect(runs.some((x) => x.outcome === "skipped")).toBe(true);
  });

  it("marks a run unknown when its scheduler died, never replays it, and starts no run while its worker lives", async () => {
    const home = tempHome();
    const file = join(home, "..", "overlap.log");
    // The worker lives until the test lets it go (a file), not for a fixed
    // 3 s: on a loaded machine the kill, the second scheduler's start and
    // its first skip took longer than that, and the orphan was gone before
    // it could be seen alive or named (60 s at most, should the test die).
    const release = join(home, "..", "release");
    writeJobs(home, [
      {
        name: "slow",
        schedule: EVERY_SECOND,
        kind: "command",
        command: `echo "begin $$" >> ${file}; for i in $(seq 600); do [ -e ${release} ] && break; sleep 0.1; done; echo "end $$" >> ${file}`,
      },
    ]);
    const a = await startScheduler(home);
    const [run] = await untilRuns(home, "a running worker", (r) =>
      r.some((x) => x.worker !== null),
    );
    // Recorded is not yet let go: the scheduler says "go" to its worker once
    // that write is acknowledged, which is after another process can read it.
    await until(
      "the worker runs its command",
      () => existsSync(file) && readFileSync(file, "utf8").includes("begin"),
    );
    await a.process.kill("SIGKILL"); // its worker lives on in its own process group
    const worker = { ...run!.worker!, bootId: run!.bootId! };
    expect(liveness(worker)).toBe("alive");
    const b = await startScheduler(home);
    let runs = await untilRuns(
      home,
      "the orphan marked unknown",
      (r) => r.find((x) => x.id === run!.id)!.outcome === "unknown",
    );
    expect(runs.find((x) => x.id === run!.id)!.note).toContain("not replayed");
    expect(b.logs("run.orphaned")[0]).toMatchObject({ run: run!.id, worker: worker.pid });
    // While the orphaned worker lives, B records skips that name it.
    runs = await untilRuns(home, "a skip naming the orphan", (r) =>
      r.some((x) => x.outcome === "skipped" && x.note!.includes(`pid ${worker.pid}`)),
    );
    writeFileSync(release, "");
    await until("the orphaned worker's end", () => liveness(worker) === "dead");
    runs = await untilRuns(home, "a later run ok", (r) => r.some((x) => x.outcome === "ok"));
    await b.process.stop();
    expect(
      runs.filter((x) => x.scheduledAt === run!.scheduledAt && x.outcome !== "skipped"),
    ).toHaveLength(1);
    expect(assertNoOverlap(file)).toBeGreaterThanOrEqual(2);
  });

  it("after downtime of several periods runs exactly one catch-up and records the rest missed", async () => {
    const home = tempHome();
    writeJobs(home, [{ name: "tick", schedule: EVERY_SECOND, kind: "command", command: "true" }]);
    const a = await startScheduler(home);
    await untilRuns(home, "an ok run", (r) => r.some((x) => x.outcome === "ok"));
    expect(await a.process.stop()).toEqual({ code: 0, signal: null });
    const before = await untilRuns(home, "all finished", (r) => r.every(finished));
    const last = Math.max(...before.map((x) => Date.parse(x.scheduledAt)));
    // Three due times passed (four until round 3 of the suite's time): one
    // is the catch-up, two or more are missed.
    await until("three due times passed", () => Date.now() >= last + 3_200);
    const downUntil = Date.now();
    const b = await startScheduler(home);
    const runs = await untilRuns(home, "the catch-up finished", (r) =>
      r.some((x) => x.trigger === "catch-up" && x.outcome === "ok"),
    );
    await b.process.stop();
    const at = (x: { scheduledAt: string }) => Date.parse(x.scheduledAt);
    const catchUps = runs
      .filter((x) => x.trigger === "catch-up" && x.outcome !== "missed")
      .sort((x, y) => at(x) - at(y));
    // The downtime's gap runs from the last due time handled to the second
    // scheduler's start, whatever instant that was (on a loaded machine a due
    // time or two after downUntil): exactly one run in it, its catch-up, the
    // newest; every other due time of it recorded missed, as no scheduler ran.
    const startup = catchUps[0]!;
    expect(at(startup)).toBeGreaterThanOrEqual(downUntil - 1_000);
    const gap = runs.filter((x) => at(x) > last && at(x) <= at(startup));
    expect(gap.filter((x) => x.outcome !== "missed").map((x) => x.id)).toEqual([startup.id]);
    const missed = gap.filter((x) => x.outcome === "missed");
    expect(missed.length).toBeGreaterThanOrEqual(2);
    for (const x of missed) expect(x.note).toContain("no scheduler ran");
    // A later catch-up is a gap of its own: a tick of the running scheduler
    // that came late by more than a period (a loaded machine), whose older
    // due times say so. Never a second run for the downtime.
    catchUps.slice(1).forEach((c, i) => {
      const since = at(catchUps[i]!);
      const its = runs.filter((x) => at(x) > since && at(x) < at(c) && x.outcome === "missed");
      expect(its.length, `the gap before catch-up ${c.id}`).toBeGreaterThanOrEqual(1);
      for (const x of its) expect(x.note).toContain("the scheduler was late");
    });
    // One record per due time: nothing run twice, nothing left out.
    const times = runs.filter((x) => x.trigger !== "retry").map((x) => x.scheduledAt);
    expect(new Set(times).size).toBe(times.length);
  });

  it("drains on SIGTERM: waits for a running worker within scheduler.drainMs, then exits 0", async () => {
    const home = tempHome();
    writeJobs(home, [
      { name: "slow", schedule: EVERY_SECOND, kind: "command", command: "sleep 1" },
    ]);
    const s = await startScheduler(home);
    const [run] = await untilRuns(home, "a running worker", (r) =>
      r.some((x) => x.worker !== null),
    );
    expect(await s.process.stop(15_000)).toEqual({ code: 0, signal: null });
    const runs = await untilRuns(home, "read", () => true);
    expect(runs.find((x) => x.id === run!.id)).toMatchObject({ outcome: "ok" });
    expect(runs.filter((x) => x.outcome === "running")).toEqual([]);
  });

  it("records a worker still running after scheduler.drainMs as unknown and exits 0", async () => {
    const home = tempHome();
    writeJobs(
      home,
      [{ name: "slow", schedule: EVERY_SECOND, kind: "command", command: "sleep 20" }],
      { drainMs: 100 },
    );
    const s = await startScheduler(home);
    const [run] = await untilRuns(home, "a running worker", (r) =>
      r.some((x) => x.worker !== null),
    );
    expect(await s.process.stop()).toEqual({ code: 0, signal: null });
    const stopped = JSON.parse(s.process.lines.at(-1)!);
    expect(stopped).toMatchObject({ event: "scheduler.stopped", abandoned: [run!.id] });
    const runs = await untilRuns(home, "read", () => true);
    expect(runs.find((x) => x.id === run!.id)!.outcome).toBe("unknown");
    process.kill(-run!.worker!.pid, "SIGKILL");
  });

  it("refuses a second scheduler on the profile with exit 78, naming the first", async () => {
    const home = tempHome();
    writeJobs(home, []);
    const first = await startScheduler(home);
    const second = new SchedulerChild(home);
    expect((await second.process.exited).code).toBe(78);
    expect(second.process.stderr).toContain(`pid ${first.pid}`);
    await first.process.stop();
  });
});

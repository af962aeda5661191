// Several hosts, one PostgreSQL database: each host runs `hearth scheduler
// run` in a home of its own (a distinct boot id, HEARTH_TEST_BOOT_ID), all
// on the same store.url. Every due time of a job is handled once across the
// hosts (one run, or one missed/skipped record); a host killed mid-run
// leaves its run recorded abandoned once, judged from the server (the
// worker's and launcher's presence locks), and the job goes on elsewhere; a
// worker killed -9 is recorded failed once by its launcher.
// Before the claim, every host ran every due job.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JobRun } from "../../../src/store/runs.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled, pgToolsFound } from "../../helpers/pg.js";
import { runsOf, SchedulerChild, untilRuns } from "../../helpers/scheduler.js";

// Due every second (every 2 s until round 3 of the suite's time: each due
// time waited for cost 2 s, and none of the claims needs the longer period).
const EVERY_SECOND = "* * * * * *";

interface Host {
  home: string;
  bootId: string;
  scheduler: SchedulerChild;
}

/** `n` hosts on `url`, each its own home and boot id, running `jobs`. */
async function startHosts(
  url: string,
  n: number,
  jobs: Record<string, unknown>[],
): Promise<Host[]> {
  const hosts = Array.from({ length: n }, (_, i) => {
    const home = tempHome();
    writeConfig(home, { store: { url }, scheduler: { port: 0, drainMs: 10_000, jobs } });
    const bootId = `host-${i}-${randomBytes(4).toString("hex")}`;
    const scheduler = new SchedulerChild(home, [], { HEARTH_TEST_BOOT_ID: bootId });
    return { home, bootId, scheduler };
  });
  await Promise.all(hosts.map((h) => h.scheduler.ready));
  return hosts;
}

/** A scheduler's handling of a due time (manual runs and retries are not). */
const scheduled = (r: JobRun) => r.trigger === "schedule" || r.trigger === "catch-up";

/** Every due time is recorded exactly once; returns the records, oldest due time first. */
function oncePerDueTime(runs: JobRun[]): JobRun[] {
  const byDue = new Map<string, JobRun[]>();
  for (const r of runs.filter(scheduled))
    byDue.set(r.scheduledAt, [...(byDue.get(r.scheduledAt) ?? []), r]);
  for (const [due, records] of byDue)
    expect(
      records.map((r) => `${r.id} ${r.outcome} ${r.bootId}`),
      `due time ${due}`,
    ).toHaveLength(1);
  return [...byDue.values()]
    .map((r) => r[0]!)
    .sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt));
}

/** begin/end lines the job's command writes: two runs at once would interleave them. */
function completedWithoutOverlap(file: string): number {
  let open = false;
  let completed = 0;
  for (const line of readFileSync(file, "utf8").trim().split("\n")) {
    if (line.startsWith("begin")) {
      expect(open, `a run began while another ran: ${line}`).toBe(false);
      open = true;
    } else {
      expect(open, `an end without a begin: ${line}`).toBe(true);
      open = false;
      completed++;
    }
  }
  return completed;
}

/** A directory for the job's files, outside every host's home. */
function scratchDir(): string {
  const dir = tempHome();
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Three hosts running a job due every second whose first run is slow (4 s),
 * later ones quick; resolves once that first run's command began.
 */
async function slowFirstRun(): Promise<{
  hosts: Host[];
  home: string;
  file: string;
  victim: JobRun;
}> {
  const url = await freshPgDatabase();
  const dir = scratchDir();
  const file = join(dir, "runs.log");
  writeFileSync(file, "");
  const slow = join(dir, "slow-done");
  const command = `echo "begin $$" >> ${file}; if [ ! -e ${slow} ]; then touch ${slow}; sleep 4; fi; echo "end $$" >> ${file}`;
  const hosts = await startHosts(url, 3, [
    { name: "slow", schedule: EVERY_SECOND, kind: "command", command },
  ]);
  const home = hosts[0]!.home;
  let victim: JobRun | undefined;
  await untilRuns(home, "the first run's command began", (runs) => {
    victim = runs.find((r) => r.outcome === "running" && r.worker !== null);
    return victim !== undefined && readFileSync(file, "utf8").startsWith("begin");
  });
  return { hosts, home, file, victim: victim! };
}

/** The runs ok of due times after `victim`'s. */
const okAfter = (runs: JobRun[], victim: JobRun) =>
  runs.filter((r) => r.scheduledAt > victim.scheduledAt && r.outcome === "ok");

const stopAll = (hosts: Host[]) =>
  Promise.all(hosts.map((h) => h.scheduler.process.stop().catch(() => undefined)));

describe.skipIf(!pgEnabled)("scheduled jobs on several hosts sharing one PostgreSQL store", () => {
  it("three hosts' schedulers: every due time runs once, on one host, never two at once", async () => {
    const url = await freshPgDatabase();
    const file = join(scratchDir(), "runs.log");
    writeFileSync(file, "");
    const command = `echo "begin $$" >> ${file}; sleep 0.3; echo "end $$" >> ${file}`;
    const hosts = await startHosts(url, 3, [
      { name: "tick", schedule: EVERY_SECOND, kind: "command", command },
    ]);
    const ok = (runs: JobRun[]) => runs.filter((r) => r.outcome === "ok");
    // Three due times, each raced for by three hosts (five took 4 s more,
    // then 2 s a due time); the claim is seen to lose below (run.claimed).
    await untilRuns(hosts[0]!.home, "three runs ok", (r) => ok(r).length >= 3, 90_000);
    await stopAll(hosts);

    const runs = await runsOf(hosts[0]!.home);
    const records = oncePerDueTime(runs);
    expect(ok(records).length).toBeGreaterThanOrEqual(3);
    // Each run ran its command once: as many completed commands as runs ok.
    expect(completedWithoutOverlap(file)).toBe(ok(runs).length);
    const boots = new Set(hosts.map((h) => h.bootId));
    for (const r of ok(runs)) expect(boots.has(r.bootId ?? "")).toBe(true);
    // The hosts that did not run a due time said why in their logs.
    const claimed = hosts.flatMap((h) => h.scheduler.logs("run.claimed"));
    expect(claimed.length).toBeGreaterThan(0);
    expect(String(claimed[0]?.note)).toMatch(/^this due time is claimed by run \d+ /);
  }, 150_000);

  it("a host killed -9 mid-run: its run is recorded abandoned once, the job runs once per due time on the others", async () => {
    const { hosts, home, file, victim } = await slowFirstRun();
    const killed = hosts.find((h) => h.scheduler.pid === victim.launcher?.pid);
    expect(killed, "the launcher of the running run is one of the hosts").toBeDefined();
    killed!.scheduler.process.child.kill("SIGKILL");
    await killed!.scheduler.process.exited;

    const after = (runs: JobRun[]) => okAfter(runs, victim);
    const runs = await untilRuns(
      home,
      "the abandoned run and two runs ok after it",
      (r) => r.find((x) => x.id === victim.id)?.outcome === "unknown" && after(r).length >= 2,
      90_000,
    );
    const survivors = hosts.filter((h) => h !== killed);
    await stopAll(survivors);

    const abandoned = runs.find((r) => r.id === victim.id)!;
    expect(abandoned.note).toMatch(/^abandoned: .* not replayed$/);
    expect(abandoned.bootId).toBe(killed!.bootId);
    // Its worker ran on to the end of its command, and nothing ran beside it.
    const final = await runsOf(home);
    oncePerDueTime(final);
    expect(completedWithoutOverlap(file)).toBe(final.filter((r) => r.outcome === "ok").length + 1);
    // Recorded once: still the same note (nobody marked it again).
    expect(final.find((r) => r.id === victim.id)?.note).toBe(abandoned.note);
    for (const r of after(final)) expect(r.bootId).not.toBe(killed!.bootId);
  }, 150_000);

  it("a worker killed -9 mid-run: its run is recorded failed once by its launcher, the next due time runs once", async () => {
    const { hosts, home, victim } = await slowFirstRun();
    // The worker's process group: the worker and the command it runs.
    process.kill(-victim.worker!.pid, "SIGKILL");
    const after = (runs: JobRun[]) => okAfter(runs, victim);
    const runs = await untilRuns(
      home,
      "the failed run and a run ok after it",
      (r) => r.find((x) => x.id === victim.id)?.outcome === "failed" && after(r).length >= 1,
      60_000,
    );
    await stopAll(hosts);
    expect(runs.find((r) => r.id === victim.id)).toMatchObject({
      outcome: "failed",
      signal: "SIGKILL",
      note: "the worker was killed by SIGKILL",
    });
    const final = await runsOf(home);
    oncePerDueTime(final);
    expect(final.filter((r) => r.outcome === "failed")).toHaveLength(1);
  }, 150_000);

  it.skipIf(!pgToolsFound)(
    "scheduled backup, doctor and optimize on a PostgreSQL profile succeed",
    async () => {
      const url = await freshPgDatabase();
      const [host] = await startHosts(url, 1, [
        { name: "backup", schedule: EVERY_SECOND, kind: "backup" },
        { name: "doctor", schedule: EVERY_SECOND, kind: "doctor" },
        { name: "optimize", schedule: EVERY_SECOND, kind: "optimize" },
      ]);
      const done = (runs: JobRun[], job: string) =>
        runs.filter((r) => r.job === job && r.outcome !== "running" && r.outcome !== "skipped");
      const runs = await untilRuns(
        host!.home,
        "a backup and a doctor run",
        (r) => ["backup", "doctor", "optimize"].every((job) => done(r, job).length >= 1),
        60_000,
      );
      await stopAll([host!]);
      const backup = done(runs, "backup")[0]!;
      expect(backup, backup.outputTail ?? "").toMatchObject({ outcome: "ok", exitCode: 0 });
      expect(backup.note).toMatch(/^backup: .*\.pgdump/);
      const doctor = done(runs, "doctor")[0]!;
      expect(doctor, doctor.outputTail ?? "").toMatchObject({ outcome: "ok", exitCode: 0 });
      expect(doctor.note).not.toContain("store_missing");
      expect(doctor.outputTail ?? "").not.toMatch(/state\.db|SQLite/);
      const optimize = done(runs, "optimize")[0]!;
      expect(optimize, optimize.outputTail ?? "").toMatchObject({ outcome: "ok", exitCode: 0 });
      expect(optimize.note).toMatch(/^optimize \(VACUUM ANALYZE\): /);
    },
    90_000,
  );
});

import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { profileDir, resolveHome, validateProfile } from "../config/paths.js";
import type { HearthConfig, JobConfig } from "../config/schema.js";
import { builtFile } from "../files/built.js";
import { dueBetween, jitterFor, nextDue } from "../ops/jobs/due.js";
import { type LaunchReport, launchJob } from "../ops/jobs/launch.js";
import { liveness } from "../process/identity.js";
import { claimInstance, type InstanceLock } from "../process/instance-lock.js";
import { setProcessKind } from "../process/kind.js";
import type { Store } from "../store/api.js";
import { openStore } from "../store/open.js";
import type { JobHealth } from "../store/runs.js";
import { watchConfig } from "./config-watch.js";
import { jsonLog, type Log } from "./log.js";
import { ProfileLock } from "./profile-lock.js";
import { type JobStatus, jobStatus, type StatusServer, serveStatus } from "./status.js";

/** Jobs that rewrite the database: they run alone on their profile (the scheduler's own writes wait). */
const STRUCTURAL = new Set(["optimize"]);
const CLI = builtFile("cli/main.js");

export interface Scheduler {
  address: string;
  profiles: string[];
  jobs: number;
  status(): JobStatus[];
  /** Stop timers, wait for running workers up to scheduler.drainMs, record the rest unknown. */
  stop(): Promise<{ abandoned: number[] }>;
}

interface Slot {
  job: JobConfig;
  profile: string;
  lastHandled: number;
  timer: NodeJS.Timeout | undefined;
  /** The launch in progress (waiting for its turn or running), if any. */
  inFlight: Promise<unknown> | undefined;
  /** Run id and worker pid of the run in progress, once started. */
  running: { id: number; pid: number } | undefined;
}

/**
 * The scheduler: runs each enabled job of config.json's `scheduler.jobs`
 * on its cron schedule for each served profile, each run in a worker
 * process (ops/jobs/launch), every run recorded in the profile's store.
 * One scheduler per profile (a kernel-held lock). It holds no store open
 * between its bookkeeping writes, so a structural job it starts is refused
 * only by other processes, never by the scheduler itself.
 */
export async function startScheduler(options: {
  home?: string | undefined;
  profiles: string[];
  logLevel?: string;
}): Promise<Scheduler> {
  setProcessKind("scheduler");
  const home = resolveHome(options.home);
  const profiles = options.profiles.map(validateProfile);
  let config: HearthConfig = loadConfig({ home });
  const log: Log = jsonLog(options.logLevel ?? process.env.HEARTH_LOG_LEVEL ?? "info");
  const instances: InstanceLock[] = [];
  const releaseAll = () => {
    for (const l of instances.splice(0)) l.release();
  };
  try {
    for (const profile of profiles) {
      instances.push(
        claimInstance(join(profileDir(home, profile), "run", "scheduler.lock"), {
          code: "HEARTH_SCHEDULER_RUNNING",
          what: `another scheduler already runs the jobs of profile ${profile}`,
          hint: "use the running scheduler, or stop it first (kill -TERM <pid>)",
        }),
      );
    }
  } catch (err) {
    releaseAll();
    throw err;
  }

  const locks = new Map(profiles.map((p) => [p, new ProfileLock()]));
  const stopping = new AbortController();
  const openFor = async <T>(profile: string, fn: (s: Store) => Promise<T>): Promise<T> => {
    const store = await openStore({ home, profile, role: "writer" });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };
  /** Bookkeeping outside a launch: shares the profile with other runs. */
  const withProfile = <T>(profile: string, fn: (s: Store) => Promise<T>): Promise<T> =>
    locks.get(profile)!.run(false, () => openFor(profile, fn));

  const health = new Map<string, JobHealth>();
  const key = (job: string, profile: string) => `${job}\0${profile}`;
  const refreshHealth = async (profile: string) => {
    for (const h of await withProfile(profile, (s) => s.runs.health()))
      health.set(key(h.job, h.profile), h);
  };

  try {
    for (const profile of profiles) {
      const orphans = await withProfile(profile, (s) =>
        s.runs.markOrphans((p) => liveness(p) === "dead"),
      );
      for (const run of orphans) {
        log.warn(
          {
            event: "run.orphaned",
            job: run.job,
            profile,
            run: run.id,
            worker: run.worker?.pid ?? null,
          },
          "a run was still running when its scheduler died: recorded unknown, not replayed",
        );
      }
      await refreshHealth(profile);
    }
  } catch (err) {
    releaseAll();
    throw err;
  }

  const slots = new Map<string, Slot>();
  const jobsOf = (c: HearthConfig) => c.scheduler.jobs.filter((j) => j.enabled);

  const record = (
    slot: Slot,
    scheduledAt: number,
    outcome: "missed" | "skipped",
    note: string,
    trigger: "schedule" | "catch-up" = "schedule",
  ) =>
    withProfile(slot.profile, (s) =>
      s.runs.record({
        job: slot.job.name,
        profile: slot.profile,
        trigger,
        scheduledAt,
        outcome,
        note,
      }),
    ).catch((err: unknown) =>
      log.error({
        event: "run.unrecorded",
        job: slot.job.name,
        profile: slot.profile,
        scheduledAt,
        outcome,
        err: String(err),
      }),
    );

  const launch = (slot: Slot, scheduledAt: number, trigger: "schedule" | "catch-up") => {
    const { job, profile } = slot;
    const exclusive = STRUCTURAL.has(job.kind);
    slot.inFlight = locks
      .get(profile)!
      .run(exclusive, () =>
        launchJob({
          home,
          profile,
          job,
          trigger,
          scheduledAt,
          worker: { command: process.execPath, args: [CLI] },
          withStore: (fn) => openFor(profile, fn),
          stopping: stopping.signal,
          onEvent: (event, fields) => {
            if (event === "run.started")
              slot.running = { id: Number(fields.id), pid: Number(fields.pid) };
            log.info({ event, ...fields });
          },
        }),
      )
      .then(async (report: LaunchReport) => {
        slot.running = undefined;
        await refreshHealth(profile);
        const h = health.get(key(job.name, profile));
        if (h && h.consecutiveFailures >= config.scheduler.alertAfter && report.outcome !== "ok") {
          log.error(
            {
              event: "job.failing",
              job: job.name,
              profile,
              consecutiveFailures: h.consecutiveFailures,
              lastOutcome: h.lastOutcome,
              lastErrorCode: h.lastErrorCode,
              lastSuccessAt: h.lastSuccessAt,
              holders: report.holders.map((x) => x.pid),
            },
            `job ${job.name} on ${profile} has not succeeded for ${h.consecutiveFailures} runs (last: ${h.lastOutcome})`,
          );
        }
      })
      .catch((err: unknown) => {
        slot.running = undefined;
        if (!stopping.signal.aborted)
          log.error(
            { event: "run.error", job: job.name, profile, err: String(err) },
            "the run could not be launched or recorded",
          );
      })
      .finally(() => {
        slot.inFlight = undefined;
      });
  };

  /** Handle every due time up to now: the newest runs (late ones are catch-ups), the older ones are missed. */
  const tick = (slot: Slot, startup: boolean) => {
    slot.timer = undefined;
    if (stopping.signal.aborted) return;
    const now = Date.now();
    const { due, uncounted } = dueBetween(slot.job, slot.lastHandled, now);
    if (due.length > 0) {
      slot.lastHandled = due[due.length - 1]!;
      const latest = due.pop()!;
      const late = startup || due.length > 0;
      due.forEach(
        (t, i) =>
          void record(
            slot,
            t,
            "missed",
            `${startup ? "no scheduler ran" : "the scheduler was late"} at this time; at most one catch-up run per gap${i === 0 && uncounted ? "; earlier due times of this gap are not recorded" : ""}`,
            "catch-up",
          ),
      );
      if (late && !slot.job.catchUp) {
        void record(slot, latest, "missed", "catch-up is off for this job", "catch-up");
      } else if (slot.inFlight) {
        const pid = slot.running?.pid;
        void record(
          slot,
          latest,
          "skipped",
          `the previous run of this job is still in progress${pid ? ` (worker pid ${pid})` : ""}`,
          late ? "catch-up" : "schedule",
        );
      } else {
        launch(slot, latest, late ? "catch-up" : "schedule");
      }
    }
    arm(slot);
  };

  const arm = (slot: Slot) => {
    const next = nextDue(slot.job, Math.max(slot.lastHandled, Date.now() - 1000));
    if (next === null) return;
    const delay = Math.max(0, next + jitterFor(slot.job, slot.profile) - Date.now());
    slot.timer = setTimeout(() => tick(slot, false), Math.min(delay, 2 ** 31 - 1));
  };

  const addSlots = async (c: HearthConfig, startup: boolean, keep: Map<string, Slot>) => {
    for (const job of jobsOf(c)) {
      for (const profile of job.profiles ?? profiles) {
        if (!profiles.includes(profile)) continue;
        const k = key(job.name, profile);
        const previous = keep.get(k);
        let lastHandled = Date.now();
        if (startup) {
          const recorded = await withProfile(profile, (s) =>
            s.runs.lastScheduled(job.name, profile),
          );
          if (recorded !== null) lastHandled = recorded;
        } else if (
          previous &&
          previous.job.schedule === job.schedule &&
          previous.job.timezone === job.timezone
        ) {
          lastHandled = previous.lastHandled;
        }
        const slot: Slot = {
          job,
          profile,
          lastHandled,
          timer: undefined,
          inFlight: previous?.inFlight,
          running: previous?.running,
        };
        slots.set(k, slot);
        if (startup) tick(slot, true);
        else arm(slot);
      }
    }
  };
  await addSlots(config, true, new Map());

  // config.json is re-read when it changes (hearth cron add/remove/pause/resume edit it).
  const watch = watchConfig(home, {
    changed: (next) => {
      config = next;
      const old = new Map(slots);
      for (const s of old.values()) if (s.timer) clearTimeout(s.timer);
      slots.clear();
      void addSlots(next, false, old).then(() =>
        log.info({ event: "config.reloaded", jobs: slots.size }, "jobs reloaded from config.json"),
      );
    },
    invalid: (err) =>
      log.error(
        { event: "config.invalid", err: String(err) },
        "configuration not reloaded; the jobs go on as they were",
      ),
  });

  const statusOf = (): JobStatus[] => {
    const now = Date.now();
    return [...slots.values()].map((s) =>
      jobStatus(s, health.get(key(s.job.name, s.profile)), config.scheduler.alertAfter, now),
    );
  };

  let server: StatusServer;
  try {
    server = await serveStatus(config.scheduler.port, statusOf);
  } catch (err) {
    watch.stop();
    for (const s of slots.values()) if (s.timer) clearTimeout(s.timer);
    releaseAll();
    throw err;
  }

  return {
    address: server.address,
    profiles,
    jobs: slots.size,
    status: statusOf,
    stop: async () => {
      stopping.abort();
      watch.stop();
      for (const s of slots.values()) if (s.timer) clearTimeout(s.timer);
      for (const l of locks.values()) l.close();
      const inFlight = [...slots.values()].map((s) => s.inFlight).filter(Boolean);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(inFlight),
        new Promise((r) => {
          timer = setTimeout(r, config.scheduler.drainMs);
        }),
      ]);
      clearTimeout(timer);
      const abandoned: number[] = [];
      for (const s of slots.values()) {
        if (!s.inFlight || !s.running) continue;
        const { id, pid } = s.running;
        try {
          await openFor(s.profile, (st) =>
            st.runs.abandon(
              id,
              `the scheduler stopped after ${config.scheduler.drainMs} ms while worker pid ${pid} still ran; not replayed`,
            ),
          );
          abandoned.push(id);
          log.warn({ event: "run.abandoned", job: s.job.name, profile: s.profile, run: id, pid });
        } catch (err) {
          log.error({
            event: "run.unrecorded",
            job: s.job.name,
            profile: s.profile,
            run: id,
            err: String(err),
          });
        }
      }
      await server.close();
      releaseAll();
      return { abandoned };
    },
  };
}

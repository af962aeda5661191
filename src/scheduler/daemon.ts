import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { databasePath, profileDir, resolveHome, validateProfile } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { Readiness, type ReadyTarget } from "../http/readiness.js";
import { warningRing } from "../log/events.js";
import { logSink } from "../log/sink.js";
import { readHolders } from "../process/holders.js";
import { liveness } from "../process/identity.js";
import { claimInstance, type InstanceLock } from "../process/instance-lock.js";
import { setProcessKind } from "../process/kind.js";
import { ProcCensus } from "../process/proc-census.js";
import { watchConfig } from "./config-watch.js";
import { drainRuns } from "./drain.js";
import { HealthTracker } from "./job-health.js";
import { jsonLog, type Log } from "./log.js";
import { ProfileAccess } from "./profile-access.js";
import { runLauncher } from "./run-launcher.js";
import { SlotTable } from "./slot-table.js";
import { type JobStatus, type StatusServer, serveStatus } from "./status.js";

export interface Scheduler {
  address: string;
  profiles: string[];
  jobs: number;
  status(): JobStatus[];
  /** Stop timers, wait for running workers up to scheduler.drainMs, record the rest unknown. */
  stop(): Promise<{ abandoned: number[] }>;
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
  const events = warningRing();
  const log: Log = jsonLog(
    options.logLevel ?? process.env.HEARTH_LOG_LEVEL ?? "info",
    logSink({ ring: events, proc: "scheduler" }),
  );
  const instances = claimInstances(home, profiles);
  const releaseAll = () => {
    for (const l of instances.splice(0)) l.release();
  };

  const access = new ProfileAccess(home, profiles);
  const stopping = new AbortController();
  const health = new HealthTracker((profile) => access.shared(profile, (s) => s.runs.health()));
  try {
    for (const profile of profiles) {
      await markOrphans(access, profile, log);
      await health.refresh(profile);
    }
  } catch (err) {
    releaseAll();
    throw err;
  }

  const runs = runLauncher({
    home,
    access,
    health,
    log,
    config: () => config,
    stopping: stopping.signal,
  });
  const slots = new SlotTable(profiles, runs, (job, profile) =>
    access.shared(profile, (s) => s.runs.lastScheduled(job, profile)),
  );
  await slots.start(config);

  // config.json is re-read when it changes (hearth cron add/remove/pause/resume edit it).
  /**
   * A reload in every profile's audit trail (a failure to record is logged,
   * never fatal). A refused config.json is logged only: no store opens
   * while the file is invalid.
   */
  const auditReload = (jobs: number) => {
    for (const profile of profiles)
      access
        .shared(profile, (s) => s.audit.record({ action: "config.reload", detail: { jobs } }))
        .catch((err: unknown) =>
          log.error({ event: "scheduler.audit_failed", err: String(err) }, "reload not audited"),
        );
  };
  const watch = watchConfig(home, {
    changed: (next) => {
      config = next;
      void slots.reload(next).then(() => {
        log.info({ event: "config.reloaded", jobs: slots.size }, "jobs reloaded from config.json");
        auditReload(slots.size);
      });
    },
    invalid: (err) => {
      log.error(
        { event: "config.invalid", err: String(err) },
        "configuration not reloaded; the jobs go on as they were",
      );
    },
  });

  const statusOf = (): JobStatus[] =>
    health.status(slots.values(), config.scheduler.alertAfter, Date.now());

  let server: StatusServer;
  try {
    const keys = new Map(profiles.map((p) => [p, {}]));
    const readiness = new Readiness({
      targets: () => {
        // One reading of /proc for every profile a probe asks about.
        const census = new ProcCensus();
        return profiles.map((p) => readyTarget(home, p, config, keys.get(p)!, access, census));
      },
      draining: () => stopping.signal.aborted,
    });
    server = await serveStatus(config.scheduler.port, statusOf, { readiness, events });
  } catch (err) {
    watch.stop();
    slots.disarm();
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
      slots.disarm();
      access.close();
      const abandoned = await drainRuns([...slots.values()], {
        drainMs: config.scheduler.drainMs,
        abandon: (slot, id, note) => access.open(slot.profile, (st) => st.runs.abandon(id, note)),
        log,
      });
      await server.close();
      releaseAll();
      return { abandoned };
    },
  };
}

/**
 * What /v1/ready checks of a profile the scheduler does not hold open: on
 * PostgreSQL a round trip through a store opened for it; on SQLite the
 * free space of its disk, and whether a structural operation (a window's
 * surgeon, from the kernel's lock table) holds it now, which would make
 * the scheduler's next write wait. Holders that cannot be read count as
 * held (fail closed).
 */
function readyTarget(
  home: string,
  profile: string,
  config: HearthConfig,
  key: object,
  access: ProfileAccess,
  census: ProcCensus,
): ReadyTarget {
  if (config.store.url !== undefined)
    return {
      profile,
      backend: "postgres",
      key,
      roundTrip: () => access.open(profile, (s) => s.schema()),
    };
  const path = databasePath(home, profile);
  let held: boolean;
  try {
    held = readHolders(path, { ghosts: false, census }).holders.some((h) =>
      h.roles.includes("surgeon"),
    );
  } catch {
    held = true;
  }
  return { profile, backend: "sqlite", key, path, parked: held };
}

/** One scheduler per profile: the kernel-held lock of each, or none at all. */
function claimInstances(home: string, profiles: string[]): InstanceLock[] {
  const instances: InstanceLock[] = [];
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
    for (const l of instances) l.release();
    throw err;
  }
  return instances;
}

/** Runs a dead scheduler left running are recorded unknown, never replayed. */
async function markOrphans(access: ProfileAccess, profile: string, log: Log): Promise<void> {
  const orphans = await access.shared(profile, (s) =>
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
}

import type { FastifyInstance } from "fastify";
import { setJobEnabled } from "../config/job-edit.js";
import { loadConfig } from "../config/load.js";
import { HearthError } from "../errors.js";
import { nextDue } from "../ops/jobs/due.js";
import { childError, runHearth } from "./child-ops.js";
import { storesOf } from "./profiles.js";

const NAME = { type: "string", minLength: 1, maxLength: 64 } as const;
const PROFILE = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]{0,63}$" } as const;

/**
 * Jobs: the scheduled jobs of config.json (read at each request, so `hearth
 * cron add` shows at once), each with its last outcome and last success per
 * served profile, and the recent runs with their honest outcomes (refusals
 * name the holder). Reads only, on the read-only stores of the profiles
 * the login sees.
 */
export function registerJobRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { limit?: string } }>("/api/jobs", async (request) => {
    const stores = storesOf(request);
    const limit = Math.min(200, Math.max(1, Number(request.query.limit ?? 50) || 50));
    const config = loadConfig({ home: stores.home });
    const jobs = config.scheduler.jobs.map((j) => ({
      name: j.name,
      schedule: j.schedule,
      kind: j.kind,
      enabled: j.enabled,
      timezone: j.timezone ?? null,
      // When the scheduler runs it next (a paused job: null).
      nextDueAt: j.enabled ? nextDue(j, Date.now()) : null,
      ...(j.kind === "optimize" ? { window: j.window } : {}),
    }));
    const health = [];
    const runs = [];
    for (const profile of stores.profiles) {
      const store = stores.reader(profile);
      health.push(...(await store.runs.health()));
      runs.push(...(await store.runs.list({ limit })));
    }
    runs.sort((a, b) => (a.scheduledAt < b.scheduledAt ? 1 : -1));
    return {
      available: true,
      jobs,
      health,
      // What an HTTP client needs of a run: no command lines, no output of user commands.
      runs: runs.slice(0, limit).map((r) => ({
        id: r.id,
        job: r.job,
        profile: r.profile,
        trigger: r.trigger,
        scheduledAt: r.scheduledAt,
        finishedAt: r.finishedAt,
        outcome: r.outcome,
        exitCode: r.exitCode,
        durationMs: r.durationMs,
        errorCode: r.errorCode,
        holders: r.holders.map((h) => ({ pid: h.pid, kind: h.kind })),
        // The home's path is the server's business: shown as $HEARTH_HOME.
        note: r.note === null ? null : r.note.split(stores.home).join("$HEARTH_HOME"),
      })),
    };
  });

  // Run a job once now, as `hearth cron run-now` does (a child process:
  // recorded like a scheduled run, trigger "manual", refused when the
  // store is held); answers with the run's report.
  app.post<{ Body: { job: string; profile: string } }>(
    "/api/jobs/run",
    {
      schema: {
        body: {
          type: "object",
          required: ["job", "profile"],
          additionalProperties: false,
          properties: { job: NAME, profile: PROFILE },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { job, profile } = request.body;
      stores.reader(profile); // a profile this login does not see: HEARTH_PROFILE_DENIED
      const config = loadConfig({ home: stores.home });
      if (!config.scheduler.jobs.some((j) => j.name === job))
        throw new HearthError("HEARTH_NOT_FOUND", `no scheduled job named ${JSON.stringify(job)}`, {
          hint: "hearth cron list",
        });
      const result = await runHearth(stores.home, profile, ["cron", "run-now", job]);
      // exit 0 ok, 3 refused or already running, 1 failed: each has its report.
      if (result.json === null || result.json === undefined)
        throw childError("hearth cron run-now", result);
      const r = result.json as { outcome: string; exitCode: number | null; note: string | null };
      request.log.info({ event: "dashboard.job_run", job, profile, outcome: r.outcome }, "job run");
      return {
        job,
        profile,
        outcome: r.outcome,
        exitCode: r.exitCode,
        note: r.note === null ? null : r.note.split(stores.home).join("$HEARTH_HOME"),
      };
    },
  );

  // Pause or resume a job: `enabled` in config.json, which the scheduler
  // reads (and re-reads when it changes), as `hearth cron pause|resume`
  // does. The jobs belong to the whole home: only the operator's own
  // all-profiles login may change them.
  app.post<{ Body: { job: string; paused: boolean } }>(
    "/api/jobs/pause",
    {
      schema: {
        body: {
          type: "object",
          required: ["job", "paused"],
          additionalProperties: false,
          properties: { job: NAME, paused: { type: "boolean" } },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      if (request.browser?.allProfiles !== true)
        throw new HearthError(
          "HEARTH_PROFILE_DENIED",
          "pausing a job changes every profile's schedule: this login sees one profile",
          { hint: "log in with the link of `hearth dashboard link`" },
        );
      const { job, paused } = request.body;
      const after = await setJobEnabled(stores.home, job, !paused);
      request.log.info(
        { event: "dashboard.job_paused", job, paused },
        paused ? "job paused" : "job resumed",
      );
      return { job, enabled: after.enabled };
    },
  );
}

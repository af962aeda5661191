import type { FastifyInstance } from "fastify";
import { loadConfig } from "../config/load.js";
import { storesOf } from "./profiles.js";

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
}

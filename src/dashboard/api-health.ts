import { lstatSync, statfsSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { backupsDir } from "../config/paths.js";
import { listBackups } from "../ops/backup-names.js";
import { psProfileSettling } from "../ops/ps.js";
import { childError, runHearth } from "./child-ops.js";
import type { DoctorRuns } from "./doctor-runs.js";
import { storesOf } from "./profiles.js";

const PROFILE = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]{0,63}$" } as const;
const profileBody = {
  type: "object",
  required: ["profile"],
  additionalProperties: false,
  properties: { profile: PROFILE },
} as const;

/**
 * Health: doctor findings (doctor-runs.ts: a child `hearth doctor`, kept
 * current by a timer and by visits), holders as `hearth ps` shows them, file sizes, free
 * space and backups; "back up now" runs `hearth backup` in a child too.
 */
export function registerHealthRoutes(app: FastifyInstance, doctor: DoctorRuns): void {
  const backups = new Map<string, Promise<unknown>>();

  app.get<{ Querystring: { profile?: string } }>(
    "/api/health",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { profile: PROFILE },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const profiles = request.query.profile
        ? [stores.reader(request.query.profile).profile]
        : stores.profiles;
      const out = [];
      for (const profile of profiles) {
        const store = stores.reader(profile);
        // A lock no process explains yet is read again, the pauses awaited.
        const ps = await psProfileSettling({ home: stores.home, profile, includeSelf: true });
        const size = (suffix: string) => {
          try {
            return lstatSync(store.path + suffix).size;
          } catch {
            return 0;
          }
        };
        let freeBytes: number | null = null;
        try {
          const fs = statfsSync(store.path);
          freeBytes = fs.bavail * fs.bsize;
        } catch {
          freeBytes = null;
        }
        out.push({
          profile,
          files: { database: size(""), wal: size("-wal"), shm: size("-shm") },
          freeBytes,
          holders: ps.holders.map((h) => ({
            pid: h.pid,
            kind: h.kind,
            roles: h.roles,
            since: h.since,
            commandLine: h.commandLine,
            self: h.pid === process.pid,
          })),
          ghosts: ps.ghosts.map((g) => ({
            pid: g.pid,
            since: g.since,
            commandLine: g.commandLine,
          })),
          unexplainedLocks: ps.unexplainedLocks,
          backups: listBackups(backupsDir(stores.home), profile)
            .slice(0, 20)
            .map((b) => ({ name: b.name, bytes: b.size, at: Math.round(b.mtimeMs) })),
          backupRunning: backups.has(profile),
          doctor: doctor.view(profile),
        });
      }
      return { profiles: out };
    },
  );

  // The chart: file sizes over time and messages stored per day, from the
  // store's health samples (a primary-key range; never a scan of messages).
  app.get<{ Querystring: { profile?: string; days?: string } }>(
    "/api/health/history",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { profile: PROFILE, days: { type: "string", pattern: "^[1-9][0-9]{0,2}$" } },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const days = Math.min(Number(request.query.days ?? 30), 366);
      const profiles = request.query.profile
        ? [stores.reader(request.query.profile).profile]
        : stores.profiles;
      const since = Date.now() - days * 86_400_000;
      const out = [];
      for (const profile of profiles) {
        const store = stores.reader(profile);
        const samples = await store.stats.samples({ since });
        // At most ~300 points per line: every k-th sample, and always the newest;
        // then this instant (not stored), so the chart ends at the store as it is now.
        const step = Math.max(1, Math.ceil(samples.length / 300));
        const thinned = samples.filter((_, i) => i % step === 0 || i === samples.length - 1);
        const now = await store.stats.current();
        out.push({
          profile,
          samples: [...thinned, now],
          days: await store.stats.days({ since, now }),
        });
      }
      return { since, profiles: out };
    },
  );

  app.post<{ Body: { profile: string } }>(
    "/api/doctor",
    { schema: { body: profileBody } },
    async (request) => {
      const stores = storesOf(request);
      const { profile } = request.body;
      stores.reader(profile);
      await doctor.run(profile);
      return { profile, doctor: doctor.latest(profile) };
    },
  );

  app.post<{ Body: { profile: string } }>(
    "/api/backup",
    { schema: { body: profileBody } },
    async (request) => {
      const stores = storesOf(request);
      const { profile } = request.body;
      stores.reader(profile);
      let running = backups.get(profile);
      if (!running) {
        running = runHearth(stores.home, profile, ["backup"])
          .then((result) => {
            if (result.code !== 0) throw childError("hearth backup", result);
            const r = result.json as {
              path: string;
              bytes: number;
              durationMs: number;
              removed: string[];
            };
            return {
              name: r.path.split("/").pop(),
              bytes: r.bytes,
              durationMs: r.durationMs,
              removed: r.removed.length,
            };
          })
          .finally(() => backups.delete(profile));
        backups.set(profile, running);
      }
      const backup = await running;
      request.log.info({ event: "dashboard.backup", profile }, "backup written");
      return { profile, backup };
    },
  );
}

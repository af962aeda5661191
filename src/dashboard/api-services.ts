import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { profileDir } from "../config/paths.js";
import { gatewayRecordPath, readRecord } from "../process/gateway-lock.js";
import { liveness } from "../process/identity.js";
import { readInstanceRecord } from "../process/instance-lock.js";
import { storesOf } from "./profiles.js";
import { supervisorView } from "./supervisor-status.js";

/** How many recent job runs (the scheduler's workers) each profile shows. */
const RUNS_SHOWN = 8;

/** How long the dashboard waits for a process's own /v1/ready, /metrics or events. */
const ASK_MS = 1500;

async function ask(url: string): Promise<Response | null> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(ASK_MS) });
  } catch {
    return null;
  }
}

/**
 * A process's recent warn/error events, from its own `GET /v1/events` (a
 * bounded ring the processes are getting: another change). Null while a
 * process does not have it (404) or does not answer: the page says so.
 */
export async function recentEvents(address: string, level = "warn"): Promise<unknown[] | null> {
  const res = await ask(`${address}/v1/events?level=${encodeURIComponent(level)}`);
  if (!res || !res.ok) return null;
  const body = (await res.json().catch(() => null)) as { events?: unknown[] } | null;
  return Array.isArray(body?.events) ? body.events : null;
}

/** The gateway's in-flight turns from its /metrics (null when not readable: auth, not listening). */
async function inFlight(address: string): Promise<number | null> {
  const res = await ask(`${address}/metrics`);
  if (!res || !res.ok) return null;
  const m = /^hearth_turns_in_flight(?:\{[^}]*\})? (\d+)/m.exec(await res.text());
  return m ? Number(m[1]) : null;
}

/**
 * GET /api/services: per served profile, the gateway and the scheduler as
 * their own records say (run/gateway.json, run/scheduler.lock.json: pid,
 * start, P1 liveness), and for a live gateway its /v1/ready, in-flight
 * turns and recent warn/error events; the scheduler's workers as their
 * runs are recorded (the newest few, with outcome, exit and duration) and
 * the scheduler's own warn/error events when its address is known. Then
 * the supervisor of this home (`hearth start`, its control socket): each
 * child's restarts, uptime, RSS, last exit and last error, or
 * `supervised: false` when none runs.
 */
export function registerServiceRoutes(app: FastifyInstance): void {
  app.get("/api/services", async (request) => {
    const stores = storesOf(request);
    const supervisor = await supervisorView(stores.home);
    const schedulerAddress = supervisor.supervised
      ? (supervisor.children.find((c) => c.name === "scheduler")?.address ?? null)
      : null;
    const out = [];
    for (const profile of stores.profiles) {
      const g = readRecord(gatewayRecordPath(stores.home, profile));
      const gAlive = g ? liveness(g) !== "dead" : false;
      let ready: { status: number; body: unknown } | null = null;
      let turns: number | null = null;
      let events: unknown[] | null = null;
      if (g && gAlive && g.address) {
        const res = await ask(`${g.address}/v1/ready`);
        ready = res ? { status: res.status, body: await res.json().catch(() => null) } : null;
        [turns, events] = await Promise.all([inFlight(g.address), recentEvents(g.address)]);
      }
      const s = readInstanceRecord(
        join(profileDir(stores.home, profile), "run", "scheduler.lock.json"),
      );
      const sAlive = s ? liveness(s) !== "dead" : false;
      const runs = (await stores.reader(profile).runs.list({ limit: RUNS_SHOWN })).map((r) => ({
        id: r.id,
        job: r.job,
        trigger: r.trigger,
        scheduledAt: r.scheduledAt,
        finishedAt: r.finishedAt,
        outcome: r.outcome,
        exitCode: r.exitCode,
        signal: r.signal,
        durationMs: r.durationMs,
        errorCode: r.errorCode,
        workerPid: r.worker?.pid ?? null,
      }));
      out.push({
        profile,
        gateway: g
          ? {
              pid: g.pid,
              since: g.since,
              up: gAlive,
              draining: g.drainingUntil !== undefined,
              ready: ready === null ? null : ready.status === 200,
              readiness: ready?.body ?? null,
              inFlight: turns,
              events,
            }
          : null,
        scheduler: s
          ? {
              pid: s.pid,
              since: s.since,
              up: sAlive,
              events: sAlive && schedulerAddress ? await recentEvents(schedulerAddress) : null,
            }
          : null,
        runs,
      });
    }
    return { profiles: out, supervisor };
  });
}

/**
 * GET /api/logs?level=warn|error: the recent events of every served
 * profile's live gateway (its own bounded ring, GET /v1/events), each with
 * its profile and process; `available: false` for a process that does not
 * expose them yet (404) or does not answer.
 */
export function registerLogRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { level?: "warn" | "error" } }>(
    "/api/logs",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { level: { type: "string", enum: ["warn", "error"] } },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const level = request.query.level ?? "warn";
      const sources = [];
      for (const profile of stores.profiles) {
        const g = readRecord(gatewayRecordPath(stores.home, profile));
        if (!g || liveness(g) === "dead" || !g.address) continue;
        const events = await recentEvents(g.address, level);
        sources.push({
          profile,
          process: "gateway",
          pid: g.pid,
          available: events !== null,
          events: events ?? [],
        });
      }
      return { level, sources };
    },
  );
}

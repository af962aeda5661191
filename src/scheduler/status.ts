import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Gauge, Registry } from "prom-client";
import type { JobConfig } from "../config/schema.js";
import { isHearthError } from "../errors.js";
import { hostPolicy, hostRefusal } from "../http/host-check.js";
import { listenOrExplain } from "../http/port-in-use.js";
import { type Readiness, readyAnswer } from "../http/readiness.js";
import { eventsAnswer } from "../log/events.js";
import type { EventRing } from "../log/ring.js";
import { nextDue, periodsSince } from "../ops/jobs/due.js";
import type { JobHealth } from "../store/runs.js";

export interface JobStatus {
  job: string;
  profile: string;
  kind: string;
  schedule: string;
  timezone: string | null;
  nextDue: string | null;
  running: { run: number; pid: number } | null;
  lastOutcome: string | null;
  lastScheduledAt: string | null;
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  /** Due times since the last success; null when it never succeeded. */
  periodsSinceSuccess: number | null;
  alertAfter: number;
  /** consecutiveFailures >= alertAfter. */
  failing: boolean;
}

export interface StatusServer {
  address: string;
  close(): Promise<void>;
}

const OUTCOMES = ["ok", "refused", "failed", "unknown"] as const;
const ROUTES = "GET /status, /metrics, /v1/health, /v1/ready or /v1/events";

/** One job's status on one profile, from its configuration, its recorded health and what runs now. */
export function jobStatus(
  s: { job: JobConfig; profile: string; running: { id: number; pid: number } | undefined },
  h: JobHealth | undefined,
  alertAfter: number,
  now: number,
): JobStatus {
  const next = nextDue(s.job, now);
  return {
    job: s.job.name,
    profile: s.profile,
    kind: s.job.kind,
    schedule: s.job.schedule,
    timezone: s.job.timezone ?? null,
    nextDue: next === null ? null : new Date(next).toISOString(),
    running: s.running ? { run: s.running.id, pid: s.running.pid } : null,
    lastOutcome: h?.lastOutcome ?? null,
    lastScheduledAt: h?.lastScheduledAt ?? null,
    lastSuccessAt: h?.lastSuccessAt ?? null,
    consecutiveFailures: h?.consecutiveFailures ?? 0,
    periodsSinceSuccess: h?.lastSuccessAt
      ? periodsSince(s.job, Date.parse(h.lastSuccessAt), now)
      : null,
    alertAfter,
    failing: (h?.consecutiveFailures ?? 0) >= alertAfter,
  };
}

/**
 * The scheduler's loopback status: GET /status (JSON, one entry per job and
 * profile), GET /metrics (Prometheus text: last outcome, last success
 * time, consecutive failures and periods since the last success per job),
 * GET /v1/health (liveness), GET /v1/ready (readiness, as the gateway's) and
 * GET /v1/events (recent warn/error log events). It listens on 127.0.0.1
 * only (no setting binds it elsewhere, so it needs no token) and answers
 * only loopback Hosts and Origins.
 */
export async function serveStatus(
  port: number,
  status: () => JobStatus[],
  probes: { readiness: Readiness; events: EventRing },
): Promise<StatusServer> {
  const registry = new Registry();
  const labelNames = ["job", "profile"] as const;
  const lastOutcome = new Gauge({
    name: "hearth_job_last_outcome",
    help: "1 for the outcome of the job's last finished run",
    labelNames: ["job", "profile", "outcome"],
    registers: [registry],
  });
  const lastSuccess = new Gauge({
    name: "hearth_job_last_success_timestamp_seconds",
    help: "When the job last succeeded (0: never)",
    labelNames,
    registers: [registry],
  });
  const failures = new Gauge({
    name: "hearth_job_consecutive_failures",
    help: "Refused, failed or unknown runs since the last success",
    labelNames,
    registers: [registry],
  });
  const periods = new Gauge({
    name: "hearth_job_periods_since_success",
    help: "Due times since the last success (-1: never succeeded)",
    labelNames,
    registers: [registry],
  });
  const fill = () => {
    registry.resetMetrics();
    for (const s of status()) {
      const l = { job: s.job, profile: s.profile };
      for (const o of OUTCOMES) lastOutcome.set({ ...l, outcome: o }, s.lastOutcome === o ? 1 : 0);
      lastSuccess.set(l, s.lastSuccessAt ? Date.parse(s.lastSuccessAt) / 1000 : 0);
      failures.set(l, s.consecutiveFailures);
      periods.set(l, s.periodsSinceSuccess ?? -1);
    }
  };
  // The same Host/Origin policy as the gateway and the dashboard (S1): a
  // page rebound to 127.0.0.1 must not read the jobs and their profiles.
  const policy = hostPolicy({ bind: "127.0.0.1" });
  const server = createServer((req, res) => {
    void (async () => {
      const refusal = hostRefusal(req.headers, policy);
      if (refusal) {
        res.writeHead(403, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: refusal.code, message: refusal.message } }));
        return;
      }
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const send = (code: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(code, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "GET") {
        send(404, { error: { code: "HEARTH_NOT_FOUND", message: ROUTES } });
      } else if (url.pathname === "/status") {
        send(200, { pid: process.pid, jobs: status() });
      } else if (url.pathname === "/metrics") {
        fill();
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(await registry.metrics());
      } else if (url.pathname === "/v1/health") {
        send(200, {
          status: "ok",
          pid: process.pid,
          uptimeMs: Math.round(process.uptime() * 1000),
        });
      } else if (url.pathname === "/v1/ready") {
        const answer = await readyAnswer(probes.readiness, true);
        const retry: Record<string, string> = {};
        if (answer.retryAfter !== undefined) retry["retry-after"] = String(answer.retryAfter);
        send(answer.status, answer.body, retry);
      } else if (url.pathname === "/v1/events") {
        try {
          send(200, eventsAnswer(probes.events, Object.fromEntries(url.searchParams)));
        } catch (err) {
          if (!isHearthError(err)) throw err;
          send(400, { error: { code: err.code, message: err.message } });
        }
      } else {
        send(404, { error: { code: "HEARTH_NOT_FOUND", message: ROUTES } });
      }
    })().catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
  await listenOrExplain(
    () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
      }),
    { what: "scheduler's status server", host: "127.0.0.1", port, setting: "scheduler.port" },
  );
  const { port: bound } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The scheduler's /status and /metrics answer loopback Hosts only, like the
 * gateway and the dashboard (S1): a page rebound to 127.0.0.1 (DNS
 * rebinding) reads neither the job names nor the profiles.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Readiness } from "../../../src/http/readiness.js";
import { warningRing } from "../../../src/log/events.js";
import { type JobStatus, type StatusServer, serveStatus } from "../../../src/scheduler/status.js";
import { getWithHost } from "../../helpers/dashboard.js";

const job: JobStatus = {
  job: "secret-job-name",
  profile: "private-profile",
  kind: "backup",
  schedule: "0 3 * * *",
  timezone: null,
  nextDue: null,
  running: null,
  lastOutcome: "ok",
  lastScheduledAt: null,
  lastSuccessAt: null,
  consecutiveFailures: 0,
  periodsSinceSuccess: null,
  alertAfter: 3,
  failing: false,
};

let server: StatusServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the scheduler's status server", () => {
  it("refuses a foreign Host or Origin with 403 HEARTH_HOST_NOT_ALLOWED, and names no job", async () => {
    const probes = { readiness: new Readiness({ targets: () => [] }), events: warningRing() };
    server = await serveStatus(0, () => [job], probes);
    const port = new URL(server.address).port;
    for (const path of ["/status", "/metrics"]) {
      for (const host of ["attacker.example", `attacker.example:${port}`, "127.0.0.1.evil"]) {
        const res = await getWithHost(server.address, path, host);
        expect(res.status, `${path} ${host}`).toBe(403);
        expect(JSON.parse(res.body).error.code).toBe("HEARTH_HOST_NOT_ALLOWED");
        expect(res.body).not.toContain("secret-job-name");
        expect(res.body).not.toContain("private-profile");
      }
      const page = await getWithHost(server.address, path, `127.0.0.1:${port}`, {
        origin: "http://attacker.example",
      });
      expect(page.status).toBe(403);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
        const res = await getWithHost(server.address, path, host);
        expect(res.status, `${path} ${host}`).toBe(200);
        expect(res.body).toContain("secret-job-name");
      }
    }
  });
});

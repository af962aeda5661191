/**
 * Pausing and resuming a job from the dashboard (issue 47): the pause is
 * `enabled: false` in config.json, the file the scheduler reads (not the
 * dashboard's memory), so `hearth cron list` and a restarted dashboard
 * agree. Only the operator's all-profiles admin login may change the
 * home's jobs. A real dashboard process on loopback.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { loginWithToken, startDashboard } from "../../helpers/dashboard.js";
import { tempHome } from "../../helpers/home.js";
import { writeJobs } from "../../helpers/scheduler.js";

const jobsFile = (home: string) =>
  JSON.parse(readFileSync(join(home, "config.json"), "utf8")).scheduler.jobs as {
    name: string;
    enabled?: boolean;
  }[];

describe("dashboard job pause and resume", () => {
  it("pauses into config.json (cron list agrees, no next due time), resumes, refuses others", async () => {
    const home = tempHome();
    writeJobs(home, [{ name: "nightly", schedule: "0 3 * * *", kind: "backup" }]);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();

    const paused = await browser.api("POST", "/api/jobs/pause", {
      body: { job: "nightly", paused: true },
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ job: "nightly", enabled: false });
    expect(jobsFile(home)[0]!.enabled).toBe(false);
    const list = await runCli(["--json", "cron", "list"], { home });
    expect(list.json<{ jobs: { enabled: boolean; nextDue: null }[] }>().jobs[0]).toMatchObject({
      enabled: false,
      nextDue: null,
    });
    const shown = await browser.api("GET", "/api/jobs");
    expect(shown.body.jobs[0]).toMatchObject({ name: "nightly", enabled: false, nextDueAt: null });

    const resumed = await browser.api("POST", "/api/jobs/pause", {
      body: { job: "nightly", paused: false },
    });
    expect(resumed.body).toEqual({ job: "nightly", enabled: true });
    expect(jobsFile(home)[0]!.enabled).toBe(true);
    expect((await browser.api("GET", "/api/jobs")).body.jobs[0].nextDueAt).toBeGreaterThan(
      Date.now(),
    );

    // An unknown job: 404 HEARTH_JOB_NOT_FOUND, nothing written.
    const before = readFileSync(join(home, "config.json"), "utf8");
    const missing = await browser.api("POST", "/api/jobs/pause", {
      body: { job: "nope", paused: true },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("HEARTH_JOB_NOT_FOUND");
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(before);

    // A login of one profile, even admin, changes no home-wide job; a read login may not act at all.
    const one = await loginWithToken(dash, home, "default", "admin");
    const denied = await one.api("POST", "/api/jobs/pause", {
      body: { job: "nightly", paused: true },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("HEARTH_PROFILE_DENIED");
    const reader = await loginWithToken(dash, home, "default", "read");
    const refused = await reader.api("POST", "/api/jobs/pause", {
      body: { job: "nightly", paused: true },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("HEARTH_SCOPE_DENIED");
    expect(jobsFile(home)[0]!.enabled).toBe(true);
  });
});

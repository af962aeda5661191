/**
 * Health stays current (issue 47): the dashboard ran doctor once per start,
 * so the page showed a green report 17 minutes old while the store had
 * changed. Now a read of the health page re-runs doctor when its last run is
 * older than `dashboard.doctorFreshMs`, a timer re-runs it every
 * `dashboard.doctorEveryMs`, and each answer says how old its report is.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Browser, startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

afterEach(async () => {
  await stopDashboards();
  cleanupHomes();
});

interface DoctorView {
  startedAt: number;
  finishedAt: number | null;
  ageMs: number | null;
  running: boolean;
  report: { status: string } | null;
}

async function doctorOf(browser: Browser): Promise<DoctorView | null> {
  const res = await browser.api("GET", "/api/health");
  expect(res.status).toBe(200);
  return res.body.profiles[0].doctor;
}

/** The first finished doctor run, reading the health page until there is one. */
async function firstRun(browser: Browser): Promise<DoctorView> {
  let seen: DoctorView | null = null;
  await until(
    "doctor finished once",
    async () => {
      seen = await doctorOf(browser);
      return seen?.finishedAt !== null && seen?.finishedAt !== undefined;
    },
    30_000,
  );
  return seen!;
}

describe("dashboard health is current", () => {
  it("a visit re-runs doctor once its report is older than doctorFreshMs, keeping the last one shown meanwhile", async () => {
    const home = tempHome();
    writeConfig(home, { dashboard: { doctorFreshMs: 1000, doctorEveryMs: 0 } });
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const first = await firstRun(browser);
    expect(first.report?.status).toBeTypeOf("string");
    expect(first.ageMs).toBeGreaterThanOrEqual(0);
    await new Promise((r) => setTimeout(r, 1200));
    // Older than 1 s: this read starts a new run and still shows the last report.
    const during = (await doctorOf(browser))!;
    expect(during.finishedAt).toBe(first.finishedAt);
    expect(during.ageMs).toBeGreaterThan(1000);
    expect(during.report).not.toBeNull();
    await until(
      "a newer doctor run",
      async () => {
        const now = await doctorOf(browser);
        return (now?.finishedAt ?? 0) > first.finishedAt!;
      },
      30_000,
    );
  });

  it("re-runs doctor every doctorEveryMs without any visit", async () => {
    const home = tempHome();
    writeConfig(home, { dashboard: { doctorFreshMs: 86_400_000, doctorEveryMs: 1500 } });
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const first = await firstRun(browser);
    // Reads do not re-run it (fresh for a day): only the timer can make a newer one.
    await until(
      "the timer's doctor run",
      async () => {
        const now = await doctorOf(browser);
        return (now?.finishedAt ?? 0) > first.finishedAt!;
      },
      30_000,
    );
  });
});

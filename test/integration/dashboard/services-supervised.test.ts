/**
 * The Services page against a real `hearth start` (issue 47): the
 * dashboard, itself one of its children, reads the supervisor's control
 * socket (run/start.sock) and shows each child's restarts, uptime, memory,
 * last exit and last error; a gateway killed with SIGKILL shows as one
 * restart with its exit; a job run is a recorded worker run. Without a
 * supervisor the page says "not supervised".
 */
import { describe, expect, it } from "vitest";
import { launchBrowser } from "../../helpers/browser.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { startDashboard } from "../../helpers/dashboard.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode, until } from "../../helpers/process.js";

interface Line {
  event?: string;
  pid?: number;
  login?: string;
  children?: Record<string, number>;
}

interface ChildRow {
  name: string;
  state: string;
  pid: number | null;
  restarts: number;
  uptimeMs: number | null;
  rssBytes: number | null;
  ready: string | null;
  lastExit: { code: number | null; signal: string | null } | null;
  lastError: { msg: string } | null;
}

const ready = (c: Child, event: string, not?: number) =>
  c.json<Line>((e) => e.event === event && e.pid !== not, event);

describe("dashboard services under hearth start", () => {
  it(
    "shows restarts, uptime, last exit and error of each child, and the workers' runs",
    { timeout: 120_000 },
    async () => {
      const home = tempHome();
      writeConfig(home, {
        gateway: { port: 0 },
        dashboard: { port: 0 },
        scheduler: {
          port: 0,
          jobs: [{ name: "reap", schedule: "0 5 * * *", kind: "reap-idle" }],
        },
      });
      const start = spawnNode([CLI, "--home", home, "start"]);
      const dashReady = await ready(start, "dashboard.ready");
      const up = await ready(start, "start.ready");
      const browser = await launchBrowser();
      try {
        const page = browser.page;
        await page.goto(dashReady.login!);
        await page.waitForURL(/\/$/);
        const services = async () =>
          (await page.evaluate("fetch('/api/services').then((r) => r.json())")) as {
            supervisor: {
              supervised: boolean;
              pid: number;
              children: ChildRow[];
              events: { child: string | null; level: number; msg: string }[];
            };
            profiles: { runs: { job: string; outcome: string; workerPid: number | null }[] }[];
          };
        const first = await services();
        expect(first.supervisor).toMatchObject({ supervised: true, pid: start.pid });
        expect(first.supervisor.children.map((c) => c.name)).toEqual([
          "gateway",
          "scheduler",
          "dashboard",
        ]);
        for (const c of first.supervisor.children) {
          expect(c).toMatchObject({ state: "running", restarts: 0, lastExit: null });
          expect(c.pid).toBe(up.children![c.name]);
          expect(c.uptimeMs).toBeGreaterThanOrEqual(0);
          expect(c.rssBytes).toBeGreaterThan(1024 * 1024);
        }

        // kill -9 the gateway: the supervisor restarts it and counts it; the page shows it.
        const old = up.children!.gateway!;
        process.kill(old, "SIGKILL");
        await ready(start, "gateway.ready", old);
        let gw: ChildRow | undefined;
        await until("the restart is counted", async () => {
          gw = (await services()).supervisor.children.find((c) => c.name === "gateway");
          return gw?.restarts === 1 && gw.state === "running";
        });
        expect(gw!.lastExit).toMatchObject({ code: null, signal: "SIGKILL" });
        // Its newest warning or error: the crash, or one the new process logged since.
        expect(gw!.lastError?.msg).toBeTruthy();
        expect((await services()).supervisor.events).toContainEqual(
          expect.objectContaining({
            child: "gateway",
            level: 40,
            msg: expect.stringMatching(/child\.crashed.*exit SIGKILL/),
          }),
        );

        // One job run: a worker, recorded, shown with its outcome.
        const run = await runCli(["cron", "run-now", "reap"], { home });
        expect(run.code).toBe(0);

        await page.goto(page.url().replace(/\/[^/]*$/, "/services"));
        const row = page.locator('table.children tr[data-child="gateway"]');
        await row.waitFor();
        await expect.poll(() => row.locator("td.restarts").textContent()).toBe("1");
        expect(await row.locator("td.last-exit").textContent()).toMatch(/^SIGKILL /);
        expect(await row.locator("td.last-error").textContent()).not.toBe("none");
        await page.locator("details.supervisor-events summary").click();
        expect(await page.locator("details.supervisor-events li").allTextContents()).toContainEqual(
          expect.stringMatching(/child\.crashed.*exit SIGKILL/),
        );
        expect(await row.locator("td.uptime").textContent()).toMatch(/\d+ (s|min)/);
        const dashRow = page.locator('table.children tr[data-child="dashboard"]');
        expect(await dashRow.locator("td.restarts").textContent()).toBe("0");
        expect(await dashRow.locator("td.last-exit").textContent()).toBe("none");
        const runRow = page.locator("table.worker-runs tbody tr", { hasText: "reap" });
        await runRow.waitFor();
        expect(await runRow.textContent()).toMatch(/reap \(manual\)ok/);
        expect(await page.getByText("not supervised").count()).toBe(0);
      } finally {
        await browser.close();
        const stop = await runCli(["--json", "stop"], { home });
        expect(stop.code).toBe(0);
        await start.exited;
      }
    },
  );

  it("says not supervised when no hearth start runs for the home", async () => {
    const home = tempHome();
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const res = await browser.api("GET", "/api/services");
    expect(res.status).toBe(200);
    expect(res.body.supervisor).toEqual({ supervised: false, reason: "no hearth start runs" });
    expect(res.body.profiles[0].runs).toEqual([]);
  });
});

import { readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { closeFakes, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

afterEach(async () => {
  await stopDashboards();
  await closeFakes();
});

/** The descriptors of `pid` on a removed file under `dir`. */
function ghosts(pid: number, dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(dir) && target.endsWith("(deleted)")) out.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

// Issue 41.1, found by the torture run (docs/reliability.md): -wal and -shm
// removed under a live gateway and dashboard. The gateway saves the commits
// and reattaches; the dashboard's long-lived reader kept reading the removed
// files and answered every request 500 (disk I/O error, then "database disk
// image is malformed") until it was restarted.
describe("the dashboard after -wal and -shm are removed under it", () => {
  it("reattaches: no 500 loop, it serves the new writes and lets go of the removed files", async () => {
    const home = tempHome();
    writeConfig(home, {});
    const gw = await startGateway(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const send = async (n: number) => {
      for (let i = 0, tries = 0; i < n && tries < 200; tries++) {
        const r = await gw.post({
          platform: "t",
          chat: "k",
          content: `m${i}`,
          clientId: `c-${n}-${i}`,
        });
        if (r.status === 200) i++;
      }
    };
    await send(20);
    const first = await browser.api("GET", "/api/sessions?limit=5");
    expect(first.status).toBe(200);
    const id = first.body.items[0].id as string;
    expect((await browser.api("GET", `/api/sessions/default/${id}/messages?limit=5`)).status).toBe(
      200,
    );

    rmSync(join(home, "state.db-wal"));
    rmSync(join(home, "state.db-shm"));
    await send(30); // the gateway saves the removed WAL's commits and writes on new files

    const answers: number[] = [];
    let latest = "";
    for (let i = 0; i < 20 && latest !== "echo: m29"; i++) {
      const r = await browser.api("GET", `/api/sessions/default/${id}/messages?limit=1`);
      answers.push(r.status);
      if (r.status === 200) latest = r.body.items[0]?.content ?? "";
    }
    expect(answers.filter((s) => s === 500)).toEqual([]);
    expect(latest).toBe("echo: m29");
    expect(ghosts(dash.pid, home)).toEqual([]);
    await gw.kill();
  }, 60_000);
});

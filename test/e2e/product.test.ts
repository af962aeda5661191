import { existsSync, mkdirSync, readdirSync, readlinkSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { spawnDashboard, startDashboard, stopDashboards } from "../helpers/dashboard.js";
import { spawnGateway, startGateway, withStore } from "../helpers/gateway.js";
import { tempHome } from "../helpers/home.js";
import { until } from "../helpers/process.js";
import { startWorker } from "../helpers/worker.js";

// The product as its users run it: a gateway and a dashboard stay up on one
// real store while short-lived workers open it, write and close, and
// structural jobs run through maintenance windows. HEARTH_E2E_CYCLES sets
// the number of cycles (npm run test:e2e:long runs 200).
const CYCLES = Number(process.env.HEARTH_E2E_CYCLES ?? 4);

const inode = (path: string) => statSync(path).ino;

/** Files of the store a process holds open although they were deleted (a ghost generation). */
function deletedStoreFiles(pid: number, dbPath: string): string[] {
  const dir = `/proc/${pid}/fd`;
  return readdirSync(dir)
    .map((fd) => {
      try {
        return readlinkSync(join(dir, fd));
      } catch {
        return "";
      }
    })
    .filter((target) => target.startsWith(dbPath) && target.endsWith("(deleted)"));
}

async function holderPids(home: string): Promise<number[]> {
  const ps = await runCli(["--json", "ps"], { home });
  expect(ps.code, ps.stderr).toBe(0);
  return ps
    .json()
    .profiles[0].holders.map((h: { pid: number }) => h.pid)
    .sort((a: number, b: number) => a - b);
}

describe("the product: gateway, dashboard and workers on one real store", () => {
  it(
    `keeps every process reading and writing across ${CYCLES} cycles of workers and windows`,
    async () => {
      const home = tempHome();
      const gw = await startGateway(home);
      const dash = await startDashboard(home);
      const browser = await dash.logIn();
      const db = gw.path;
      try {
        let wal = inode(`${db}-wal`);
        let shm = inode(`${db}-shm`);
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          // A short-lived worker opens the store, writes, closes and exits.
          const worker = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
          await worker.call("open", { home });
          const session = await worker.call<{ id: string }>("create", { title: `worker ${cycle}` });
          for (let i = 0; i < 5; i++)
            await worker.call("append", { sessionId: session.id, content: `w${cycle}.${i}` });
          await worker.call("close");
          await worker.process.kill("SIGTERM");

          // A structural job through a window every other cycle.
          if (cycle % 2 === 1) {
            const optimize = await runCli(["--json", "sessions", "optimize", "--window"], { home });
            expect(optimize.code, optimize.stderr).toBe(0);
            expect([...optimize.json().window.parked].sort()).toEqual([gw.pid, dash.pid].sort());
          }

          // The gateway and the dashboard keep reading and writing.
          const posted = await gw.post({
            platform: "t",
            chat: `c${cycle}`,
            content: `cycle ${cycle}`,
          });
          expect(posted.status, JSON.stringify(posted.body)).toBe(200);
          await until(`the dashboard shows cycle ${cycle}`, async () => {
            const list = await browser.api("GET", "/api/sessions");
            return (
              list.status === 200 && JSON.stringify(list.body).includes(`"chatKey":"c${cycle}"`)
            );
          });

          // -wal and -shm keep their inodes while anyone holds the store (a window
          // lets everyone close, so the files may be new after one).
          if (cycle % 2 === 0) {
            expect(inode(`${db}-wal`)).toBe(wal);
            expect(inode(`${db}-shm`)).toBe(shm);
          } else {
            wal = inode(`${db}-wal`);
            shm = inode(`${db}-shm`);
          }
          // No hearth process writes to a deleted generation.
          for (const pid of [gw.pid, dash.pid]) expect(deletedStoreFiles(pid, db)).toEqual([]);
          // ps names exactly the live holders.
          expect(await holderPids(home)).toEqual([gw.pid, dash.pid].sort((a, b) => a - b));
        }

        // A message acknowledged before a kill -9 is there after the restart, in the same session.
        const before = await gw.post({ platform: "t", chat: "resume", content: "before the kill" });
        expect(before.status).toBe(200);
        await gw.kill("SIGKILL");
        const again = await startGateway(home);
        const after = await again.post({
          platform: "t",
          chat: "resume",
          content: "after the restart",
        });
        expect(after.status).toBe(200);
        expect(after.body.session.id).toBe(before.body.session.id);
        const contents = await withStore(home, async (s) =>
          (await s.messages.load(before.body.session.id)).map((m) => m.content),
        );
        expect(contents).toEqual(expect.arrayContaining(["before the kill", "after the restart"]));
        expect((await withStore(home, (s) => s.quickCheck())).ok).toBe(true);
        const counts = await withStore(home, (s) => s.counts());
        expect(counts.sessions).toBe(2 * CYCLES + 1);
      } finally {
        await stopDashboards();
      }
    },
    60_000 + CYCLES * 5_000,
  );

  it("refuses a symlinked store in every process kind, and leaves it untouched", async () => {
    const home = tempHome();
    const real = await openStore({ home: tempHome() });
    const target = real.path;
    await real.close();
    mkdirSync(home, { recursive: true, mode: 0o700 });
    symlinkSync(target, join(home, "state.db"));
    const before = statSync(target).mtimeMs;

    const gateway = spawnGateway(home);
    expect((await gateway.exited).code).not.toBe(0);
    expect(gateway.stderr).toContain("symbolic link");
    const dashboard = spawnDashboard(home);
    expect((await dashboard.exited).code).not.toBe(0);
    expect(dashboard.stderr).toContain("symbolic link");
    const worker = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    expect((await worker.request("open", { home })).error?.code).toBe("HEARTH_PATH_SYMLINK");
    const cli = await runCli(["--json", "sessions", "list"], { home });
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stderr).error.code).toBe("HEARTH_PATH_SYMLINK");
    expect(statSync(target).mtimeMs).toBe(before);
    expect(existsSync(`${join(home, "state.db")}-wal`)).toBe(false);
  });
});

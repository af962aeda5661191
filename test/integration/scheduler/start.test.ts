import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../../helpers/cli.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, isRunning, spawnNode, until } from "../../helpers/process.js";

interface Line {
  event?: string;
  pid?: number;
  address?: string;
  children?: Record<string, number>;
}

function spawnStart(home: string): Child {
  return spawnNode([CLI, "--home", home, "start"]);
}

const ready = (c: Child, event: string, not?: number) =>
  c.json<Line>((e) => e.event === event && e.pid !== not, event);

describe("hearth start", () => {
  it("brings up gateway, dashboard and scheduler, restarts a killed child, stops on SIGTERM with exit 0 and no holder left", async () => {
    const home = tempHome(); // created on first run
    const start = spawnStart(home);
    const up = await ready(start, "start.ready");
    const gateway = await ready(start, "gateway.ready");
    const scheduler = await ready(start, "scheduler.ready");
    const dashboard = await ready(start, "dashboard.ready");
    expect(up.children).toEqual({
      gateway: gateway.pid,
      scheduler: scheduler.pid,
      dashboard: dashboard.pid,
    });
    // The readiness lines pass through unchanged, then the summary.
    await start.line((l) => l.startsWith("hearth is running on"), "the summary");
    expect(start.stdout).toContain(`gateway    ${gateway.address}`);
    expect((await fetch(`${gateway.address}/v1/health`)).status).toBeLessThan(500);
    expect((await fetch(`${scheduler.address}/status`)).status).toBe(200);

    process.kill(scheduler.pid!, "SIGKILL");
    const again = await ready(start, "scheduler.ready", scheduler.pid);
    expect(again.pid).not.toBe(scheduler.pid);
    expect(start.stderr).toContain('"event":"child.crashed","name":"scheduler"');
    // A crash is a warning in the log (pino level 40), not info.
    expect(start.stderr).toMatch(/"level":40,[^\n]*"event":"child.crashed"/);

    expect(await start.stop(30_000)).toEqual({ code: 0, signal: null });
    const ps = await runCli(["--json", "ps"], { home });
    expect(ps.json().profiles.flatMap((p: { holders: unknown[] }) => p.holders)).toEqual([]);
  });

  it("does not restart a child that exits 78 and exits 78 naming it", async () => {
    const home = tempHome();
    writeConfig(home, {});
    const first = await startGateway(home); // the supervised gateway is then a second one
    const start = spawnStart(home);
    const exit = await start.exited;
    expect(exit.code).toBe(78);
    expect(start.stderr).toContain(`pid ${first.pid}`);
    expect(start.stderr).toMatch(/gateway exited 78: .*not restarted/);
    expect(start.stderr.match(/"event":"child.started","name":"gateway"/g)).toHaveLength(1);
    expect(first.child.exitCode).toBeNull();
    await first.process.stop();
  });

  it("refuses a bad profile name or config.json with exit 78 before it starts any child", async () => {
    const home = tempHome();
    const badProfile = await runCli(["--json", "start", "--profiles", "Not A Profile"], { home });
    expect(badProfile.code).toBe(78);
    expect(badProfile.stderr).toContain("HEARTH_PROFILE_INVALID");
    writeConfig(home, { gateway: { prot: 1 } });
    const badConfig = await runCli(["--json", "start"], { home });
    expect(badConfig.code).toBe(78);
    expect(badConfig.stderr).toContain("HEARTH_CONFIG_INVALID");
    for (const run of [badProfile, badConfig]) expect(run.stderr).not.toContain("child.started");
  });

  it("refuses a second hearth start on the same home with exit 78", async () => {
    const home = tempHome();
    const first = spawnStart(home);
    await ready(first, "start.ready");
    const second = await runCli(["start"], { home });
    expect(second.code).toBe(78);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(await first.stop(30_000)).toEqual({ code: 0, signal: null });
  });
  it("its children drain and exit by themselves when hearth start is killed with SIGKILL", async () => {
    const home = tempHome();
    const start = spawnStart(home);
    const up = await ready(start, "start.ready");
    const pids = Object.values(up.children as Record<string, number>);
    expect(pids).toHaveLength(3);
    await start.kill("SIGKILL");
    await until("every child exited", () => pids.every((pid) => !isRunning(pid)), 30_000);
    const ps = await runCli(["--json", "ps"], { home });
    expect(ps.json().profiles.flatMap((p: { holders: unknown[] }) => p.holders)).toEqual([]);
  });
});

/**
 * `hearth status`, `restart`, `stop` and `logs` talk to a real `hearth
 * start` over its control socket (run/start.sock): every child's pid,
 * restarts, memory and readiness; a child killed with SIGKILL counted as a
 * restart; a restart that waits until the child serves again; the crash
 * in the supervisor's log ring, followed live; a stop that drains
 * everything; exit 6 with HEARTH_SUPERVISOR_NOT_RUNNING when none runs;
 * a socket this user must not trust refused.
 */
import { chownSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode, until } from "../../helpers/process.js";

interface Line {
  event?: string;
  pid?: number;
  children?: Record<string, number>;
}

interface ChildRow {
  name: string;
  state: string;
  pid: number | null;
  restarts: number;
  crashes: number;
  rssBytes: number | null;
  address: string | null;
  ready: { status: string; reasons: { code: string }[] } | null;
}

const ready = (c: Child, event: string, not?: number) =>
  c.json<Line>((e) => e.event === event && e.pid !== not, event);

/** Every port free (0): nothing collides with a port another test holds. */
function quietHome(extra: Record<string, unknown> = {}): string {
  const home = tempHome();
  writeConfig(home, {
    gateway: { port: 0 },
    dashboard: { port: 0 },
    scheduler: { port: 0, jobs: [] },
    ...extra,
  });
  return home;
}

async function status(home: string) {
  const r = await runCli(["--json", "status"], { home });
  return {
    code: r.code,
    stderr: r.stderr,
    children: (r.code === 6 ? [] : r.json().children) as ChildRow[],
  };
}

const row = (rows: ChildRow[], name: string) => rows.find((c) => c.name === name)!;

describe("hearth status, restart, stop and logs", () => {
  it(
    "report, restart and stop the children of a running hearth start through its socket",
    { timeout: 120_000 },
    async () => {
      const home = quietHome();
      const start = spawnNode([CLI, "--home", home, "start"]);
      const up = await ready(start, "start.ready");
      const sock = statSync(join(home, "run", "start.sock"));
      expect(sock.isSocket()).toBe(true);
      expect(sock.mode & 0o777).toBe(0o600);

      const first = await status(home);
      expect(first.code).toBe(0);
      expect(first.children.map((c) => c.name)).toEqual(["gateway", "scheduler", "dashboard"]);
      for (const c of first.children) {
        expect(c).toMatchObject({
          state: "running",
          restarts: 0,
          ready: { status: "ready", reasons: [] },
        });
        expect(c.pid).toBe(up.children![c.name]);
        expect(c.rssBytes).toBeGreaterThan(1024 * 1024);
        expect(c.address).toMatch(/^https?:\/\/127\.0\.0\.1:\d+$/);
      }
      const text = await runCli(["status"], { home });
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/gateway\s+running\s+\d+/);

      // A follower of the log sees the next crash as it happens.
      const follower = spawnNode([
        CLI,
        "--home",
        home,
        "--json",
        "logs",
        "-f",
        "--level",
        "warn",
        "-n",
        "0",
      ]);
      // Subscribed once the supervisor says so (with -n 0, a crash before that is not shown:
      // a fixed 200 ms wait lost the race on a loaded machine and the test waited out its timeout).
      await until(
        "the follower subscribed",
        async () => follower.stderr.includes("following new events"),
        60_000,
      );

      // kill -9: the supervisor restarts it, and counts it.
      const old = up.children!.scheduler!;
      process.kill(old, "SIGKILL");
      await ready(start, "scheduler.ready", old);
      const crashed = await follower.json<{ event?: string; name?: string; level?: number }>(
        (e) => e.event === "child.crashed" && e.name === "scheduler",
        "the crash, followed",
      );
      expect(crashed.level).toBe(40);
      let after = await status(home);
      await until("every child ready again", async () => {
        after = await status(home);
        return after.code === 0;
      });
      expect(row(after.children, "scheduler")).toMatchObject({
        restarts: 1,
        crashes: 1,
        state: "running",
      });
      expect(row(after.children, "scheduler").pid).not.toBe(old);
      expect(row(after.children, "gateway").restarts).toBe(0);
      expect(await follower.stop()).toMatchObject({ code: 0 });

      // hearth restart: through the running supervisor, answered once the child serves again.
      const restart = await runCli(["--json", "restart", "gateway"], { home });
      expect(restart.code).toBe(0);
      const [restarted] = restart.json().restarted;
      expect(restarted.name).toBe("gateway");
      expect(restarted.pid).not.toBe(up.children!.gateway);
      const again = await status(home);
      expect(again.code).toBe(0);
      expect(row(again.children, "gateway")).toMatchObject({ pid: restarted.pid, restarts: 1 });
      expect(start.stderr.match(/"event":"start\.ready"/g) ?? []).toHaveLength(0);

      // The ring holds the supervisor's events and the children's, by level.
      const warn = await runCli(["--json", "logs", "--level", "warn"], { home });
      expect(warn.code).toBe(0);
      const events = warn.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events.every((e: { level: number }) => e.level >= 40)).toBe(true);
      expect(events).toContainEqual(
        expect.objectContaining({ event: "child.crashed", name: "scheduler", proc: "start" }),
      );
      const all = await runCli(["--json", "logs", "-n", "2000"], { home });
      const procs = new Set(
        all.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).proc),
      );
      expect([...procs]).toEqual(
        expect.arrayContaining(["start", "gateway", "scheduler", "dashboard"]),
      );
      expect(all.stdout).toContain('"event":"child.restarting"');

      const stop = await runCli(["--json", "stop"], { home });
      expect(stop.code).toBe(0);
      expect(stop.json()).toMatchObject({ stopped: true, pid: start.pid, code: 0 });
      expect(await start.exited).toEqual({ code: 0, signal: null });
      const gone = await status(home);
      expect(gone.code).toBe(6);
      expect(gone.stderr).toContain("HEARTH_SUPERVISOR_NOT_RUNNING");
    },
  );

  it("five crashes in a row are a crash loop, logged at error; status counts them", async () => {
    // A first restart after 50 ms, not the default 500: the five backoffs
    // take 1.55 s instead of 15.5 s; they double all the same (below).
    const home = quietHome({ start: { restartBackoffMs: 50 } });
    const start = spawnNode([CLI, "--home", home, "start"]);
    const up = await ready(start, "start.ready");
    const seen = new Set([up.children!.scheduler!]);
    let pid = up.children!.scheduler!;
    for (let i = 0; i < 5; i++) {
      process.kill(pid, "SIGKILL");
      pid = (
        await start.json<Line>(
          (e) => e.event === "scheduler.ready" && !seen.has(e.pid!),
          "a new scheduler.ready",
        )
      ).pid!;
      seen.add(pid);
    }
    const errors = await runCli(["--json", "logs", "--level", "error"], { home });
    const loops = errors.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(loops).toEqual([
      expect.objectContaining({
        level: 50,
        event: "child.crash_loop",
        name: "scheduler",
        crashes: 5,
      }),
    ]);
    const crashed = (await runCli(["--json", "logs"], { home })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((l) => l.event === "child.crashed");
    expect(crashed.map((l) => [l.name, l.crashes, l.restartInMs])).toEqual([
      ["scheduler", 1, 50],
      ["scheduler", 2, 100],
      ["scheduler", 3, 200],
      ["scheduler", 4, 400],
      ["scheduler", 5, 800],
    ]);
    const now = await status(home);
    expect(row(now.children, "scheduler")).toMatchObject({ restarts: 5, crashes: 5 });
    expect(await start.stop(30_000)).toEqual({ code: 0, signal: null });
  });

  it("exits 5 while a child does not answer its /v1/ready", async () => {
    const home = quietHome();
    const start = spawnNode([CLI, "--home", home, "start"]);
    const up = await ready(start, "start.ready");
    const scheduler = up.children!.scheduler!;
    process.kill(scheduler, "SIGSTOP");
    try {
      const stuck = await status(home);
      expect(stuck.code).toBe(5);
      expect(row(stuck.children, "scheduler").ready).toMatchObject({
        status: "unreachable",
        reasons: [{ code: "HEARTH_CHILD_UNREACHABLE" }],
      });
      expect(row(stuck.children, "gateway").ready?.status).toBe("ready");
    } finally {
      process.kill(scheduler, "SIGCONT");
    }
    expect(await start.stop(30_000)).toEqual({ code: 0, signal: null });
  });

  it("says no hearth start runs with exit 6, and refuses a socket this user must not trust", async () => {
    const home = tempHome();
    for (const args of [["status"], ["restart", "gateway"], ["stop"], ["logs"]]) {
      const r = await runCli(["--json", ...args], { home });
      expect(r.code, args.join(" ")).toBe(6);
      expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_SUPERVISOR_NOT_RUNNING");
    }
    const bad = await runCli(["restart", "gatewya"], { home });
    expect(bad.code).toBe(2);

    mkdirSync(join(home, "run"), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, "run", "start.sock"), "");
    const file = await runCli(["--json", "status"], { home });
    expect(file.code).toBe(1);
    expect(JSON.parse(file.stderr).error.code).toBe("HEARTH_CONTROL_SOCKET_UNSAFE");
    chownSync(join(home, "run"), 65534, 65534);
    const foreign = await runCli(["--json", "status"], { home });
    expect(JSON.parse(foreign.stderr).error.code).toBe("HEARTH_CONTROL_SOCKET_UNSAFE");
  });
});

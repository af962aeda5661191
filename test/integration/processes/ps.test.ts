import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { PsProfile, PsReport } from "../../../src/ops/ps.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { spawnChild } from "../../helpers/process.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const WORKER = join(ROOT, "test/fixtures/store-worker.mjs");

async function ps(home: string, ...args: string[]): Promise<PsReport> {
  const r = await runCli([...args, "--json", "ps"], { home });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PsReport;
}

async function psDefault(home: string): Promise<PsProfile> {
  const report = await ps(home);
  expect(report.profiles.map((p) => p.profile)).toEqual(["default"]);
  return report.profiles[0]!;
}

/** A child that is not hearth, started once it printed "ready" (never a sleep). */
async function startForeign(command: string, args: string[], options: { cwd?: string } = {}) {
  const child = spawnChild(command, args, options);
  await child.line((l) => l === "ready", "ready");
  return child;
}

async function worker(kind: string, home: string, args: Record<string, unknown> = {}) {
  const w = await startWorker({ HEARTH_PROCESS_KIND: kind });
  await w.call("open", { home, ...args });
  return w;
}

/**
 * As root every live process's descriptor table is readable, so nothing alive may be
 * left uninspected. (A pid of another test's process on this filesystem that exits
 * between ps reading /proc/locks and /proc/<pid>/fd is listed too: it is gone by now.)
 */
function expectAllInspected(p: PsProfile): void {
  for (const pid of p.uninspected) expect(existsSync(`/proc/${pid}`), `pid ${pid}`).toBe(false);
}

function markerOf(profileDir: string, w: Worker): string {
  const names = readdirSync(join(profileDir, "run")).filter((n) => n.startsWith(`${w.pid}-`));
  expect(names).toHaveLength(1);
  return join(profileDir, "run", names[0]!);
}

describe("hearth ps", () => {
  it("shows a gateway, a dashboard, a worker and a CLI reader at once, as JSON and text", async () => {
    const home = tempHome();
    const db = join(home, "state.db");
    const before = Date.now();
    const gateway = await startGateway(home);
    const dashboard = await worker("dashboard", home);
    const work = await worker("worker", home);
    const cli = await worker("cli", home, { role: "reader" });
    const after = Date.now();

    const p = await psDefault(home);
    expect(p).toMatchObject({
      path: db,
      exists: true,
      ghosts: [],
      unexplainedLocks: 0,
      staleMarkers: [],
    });
    expectAllInspected(p);
    const workerCmd = `${process.execPath} ${WORKER}`;
    const gatewayCmd = `${process.execPath} ${CLI} --home ${home} gateway run`;
    const writer = ["reader", "writer"];
    const expected = [
      { pid: gateway.pid, kind: "gateway", roles: writer, cmd: gatewayCmd },
      { pid: dashboard.pid, kind: "dashboard", roles: writer, cmd: workerCmd },
      { pid: work.pid, kind: "worker", roles: writer, cmd: workerCmd },
      { pid: cli.pid, kind: "cli", roles: ["reader"], cmd: workerCmd },
    ].sort((a, b) => a.pid - b.pid);
    // Exactly these four, in pid order: not the test process, not ps itself.
    expect(p.holders.map((h) => h.pid)).toEqual(expected.map((e) => e.pid));
    for (const [i, h] of p.holders.entries()) {
      const e = expected[i]!;
      expect(h).toMatchObject({ pid: e.pid, kind: e.kind, roles: e.roles, commandLine: e.cmd });
      expect(h.files).toEqual([db, `${db}-shm`]);
      const since = Date.parse(h.since!);
      // btime has whole-second resolution.
      expect(since).toBeGreaterThanOrEqual(before - 1_500);
      expect(since).toBeLessThanOrEqual(after + 1_500);
      if (e.kind === "cli") {
        // Readers leave no marker.
        expect(h.marker).toBeNull();
      } else {
        expect(h.marker?.argv.join(" ")).toBe(e.cmd);
        expect(h.marker?.profile).toBe("default");
      }
    }

    const text = await runCli(["ps"], { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`profile default  ${db}`);
    for (const e of expected) {
      expect(text.stdout).toMatch(new RegExp(`^ +${e.pid} +${e.kind} +${e.roles.join(",")} `, "m"));
    }
  });

  it("names processes that are not hearth by pid, with kind unknown and no roles", async () => {
    const home = tempHome();
    const db = join(home, "state.db");
    await (await worker("worker", home)).call("close");
    // Plain better-sqlite3: SQLite's own POSIX locks (in WAL mode a SHARED lock on the
    // database and the -shm dead-man byte, for as long as it is open) name it.
    const sqlite = await startForeign(
      process.execPath,
      [
        "-e",
        `const db = new (require("better-sqlite3"))(process.argv[1]);
         db.prepare("SELECT count(*) FROM sqlite_schema").get();
         console.log("ready"); setInterval(() => {}, 1e9);`,
        db,
      ],
      { cwd: ROOT },
    );
    // flock(2) from a single process (perl, no child to inherit the lock): a FLOCK lock.
    const flock = await startForeign("perl", [
      "-MFcntl=:flock",
      "-e",
      'open(my $f, "<", $ARGV[0]) or die $!; flock($f, LOCK_SH) or die $!; $| = 1; print "ready\\n"; sleep 60',
      db,
    ]);
    const p = await psDefault(home);
    const foreign = [sqlite.pid, flock.pid].sort((a, b) => a - b);
    expect(p.holders).toEqual(
      foreign.map((pid) =>
        expect.objectContaining({ pid, kind: "unknown", roles: [], marker: null }),
      ),
    );
    const bySqlite = p.holders.find((h) => h.pid === sqlite.pid)!;
    expect(bySqlite.files).toEqual([db, `${db}-shm`]);
    expect(bySqlite.commandLine).toContain(db);
    const byFlock = p.holders.find((h) => h.pid === flock.pid)!;
    expect(byFlock.files).toEqual([db]);
    expect(byFlock.commandLine).toMatch(/^perl -MFcntl=:flock -e /);
    expect(byFlock.commandLine!.endsWith(` ${db}`)).toBe(true);
    expect(p.unexplainedLocks).toBe(0);

    const text = await runCli(["ps"], { home });
    expect(text.stdout).toMatch(new RegExp(`^ +${sqlite.pid} +unknown +- `, "m"));
  });

  it("drops a kill -9'd worker, reports its marker as stale, and the next writer sweeps it", async () => {
    const home = tempHome();
    const victim = await worker("worker", home);
    const marker = markerOf(home, victim);
    expect(existsSync(marker)).toBe(true);
    const held = await psDefault(home);
    expect(held.holders.map((h) => h.pid)).toEqual([victim.pid]);
    expect(held.holders[0]!.marker).not.toBeNull();
    expect(held.staleMarkers).toEqual([]);

    await victim.kill("SIGKILL");
    const after = await psDefault(home);
    expect(after.holders).toEqual([]);
    expect(after.staleMarkers).toEqual([{ path: marker, pid: victim.pid }]);
    expect(existsSync(marker)).toBe(true); // ps changes no file

    // A reader does not sweep; the next writer does.
    const reader = await worker("cli", home, { role: "reader" });
    expect(existsSync(marker)).toBe(true);
    const next = await worker("worker", home);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(markerOf(home, next))).toBe(true);
    const swept = await psDefault(home);
    expect(swept.staleMarkers).toEqual([]);
    expect(swept.holders.map((h) => h.pid)).toEqual([reader.pid, next.pid].sort((a, b) => a - b));
  });

  it("lists a process still holding a deleted -wal and -shm as a ghost", async () => {
    const home = tempHome();
    const db = join(home, "state.db");
    const holder = await worker("worker", home);
    expect((await psDefault(home)).ghosts).toEqual([]);

    rmSync(`${db}-wal`);
    rmSync(`${db}-shm`);
    const p = await psDefault(home);
    expect(p.ghosts).toEqual([
      {
        pid: holder.pid,
        commandLine: `${process.execPath} ${WORKER}`,
        since: expect.any(String),
        files: [`${db}-shm`, `${db}-wal`],
      },
    ]);
    expectAllInspected(p);
    // It still holds the database itself.
    expect(p.holders).toEqual([
      expect.objectContaining({ pid: holder.pid, kind: "worker", files: [db] }),
    ]);
    expect(p.unexplainedLocks).toBe(0);
    const text = await runCli(["ps"], { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `pid ${holder.pid} still holds a deleted generation: ${db}-shm, ${db}-wal`,
    );
  });

  it("lists every profile's store, and --profile limits it to one", async () => {
    const home = tempHome();
    const workDb = join(home, "profiles", "work", "state.db");
    const inWork = await worker("worker", home, { profile: "work" });
    const inDefault = await worker("dashboard", home);
    await (await worker("worker", home, { profile: "play" })).call("close");
    // Neither is a profile store: no database, and a name hearth would not make.
    mkdirSync(join(home, "profiles", "empty"));
    mkdirSync(join(home, "profiles", "Bad"));
    writeFileSync(join(home, "profiles", "Bad", "state.db"), "");

    const all = await ps(home);
    expect(all.home).toBe(home);
    expect(all.profiles.map((p) => p.profile)).toEqual(["default", "play", "work"]);
    const [def, play, work] = all.profiles;
    expect(def!.holders.map((h) => [h.pid, h.kind])).toEqual([[inDefault.pid, "dashboard"]]);
    expect(play).toMatchObject({ exists: true, holders: [], staleMarkers: [] });
    expect(work).toMatchObject({ path: workDb, exists: true, unexplainedLocks: 0 });
    expect(work!.holders).toEqual([
      expect.objectContaining({
        pid: inWork.pid,
        kind: "worker",
        files: [workDb, `${workDb}-shm`],
        marker: expect.objectContaining({ profile: "work" }),
      }),
    ]);

    for (const profile of all.profiles) expectAllInspected(profile);

    const only = await ps(home, "--profile", "work");
    expect(only.profiles).toEqual([work]);
    const missing = await ps(home, "--profile", "nothere");
    expect(missing.profiles).toEqual([
      expect.objectContaining({ profile: "nothere", exists: false, holders: [] }),
    ]);
    const text = await runCli(["--profile", "work", "ps"], { home });
    expect(text.stdout).toContain(`profile work  ${workDb}`);
    expect(text.stdout).toMatch(new RegExp(`^ +${inWork.pid} +worker `, "m"));
    expect(text.stdout).not.toContain("profile default");
    expect(text.stdout).not.toMatch(new RegExp(`\\b${inDefault.pid}\\b`));
  });
});

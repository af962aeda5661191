import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode, until } from "../../helpers/process.js";
import {
  fillDisk,
  mountSmallDisk,
  mountSmallExt4,
  unmountSmallDisks,
} from "../../helpers/small-disk.js";

afterEach(() => unmountSmallDisks());

const ls = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** The state of a process from /proc (R, S, T for stopped, ...). */
const procState = (pid: number) =>
  readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];

/** A store of about `mib` MiB at `home`, closed (one file, no sidecars). */
async function storeOf(home: string, mib: number): Promise<void> {
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "big" });
  const text = "y".repeat(4000);
  const n = Math.ceil((mib * 1048576) / 4100);
  await store.messages.appendBatch(
    s.id,
    Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `${i} ${text}` })),
  );
  await store.close();
}

/**
 * `hearth backup` stopped (SIGSTOP, failpoint backup.copy-step) after its
 * first step of pages went into the staging file in backups/, an ext4 disk
 * of 64 MiB that passed admission; then that disk is filled.
 */
async function backupStoppedOnFullDisk(home: string) {
  const backups = join(home, "backups");
  const child = spawnNode([CLI, "--home", home, "--json", "backup"], {
    env: { HEARTH_FAILPOINTS: "backup.copy-step=stop" },
  });
  child.child.stdin.end();
  await until("the backup stopped mid-copy", () => procState(child.pid) === "T", 30_000);
  expect(ls(backups).some((n) => n.startsWith(".staging-default-"))).toBe(true);
  fillDisk(backups);
  return { child, backups };
}

describe("hearth backup onto a disk that fills up during the copy (Recovery 4.1)", () => {
  it("names the backups directory, says the store is untouched, and leaves nothing behind", async (ctx) => {
    const home = tempHome();
    await storeOf(home, 18);
    mountSmallExt4(join(home, "backups"), 64, join(dirname(home), "backups.img"), ctx);
    const { child, backups } = await backupStoppedOnFullDisk(home);
    process.kill(child.pid, "SIGCONT");
    const exit = await child.exited;
    expect(exit.code, child.stderr).toBe(1);
    const { error } = JSON.parse(child.stderr.slice(child.stderr.indexOf('{\n  "error"')));
    expect(error.code).toBe("HEARTH_NO_SPACE");
    expect(error.details).toEqual({ situation: "copy" });
    expect(error.resource).toBe(backups);
    expect(error.message).toContain(`the disk holding ${backups} filled up while a backup`);
    expect(error.message).toContain("the store is untouched");
    expect(error.message).not.toContain("this write was not stored");
    expect(error.hint).toContain(`df -h ${backups}`);
    // No staging file, no -journal SQLite's backup left beside it: only the filler.
    expect(ls(backups)).toEqual(["filler"]);
    // The store itself writes on.
    const store = await openStore({ home });
    await store.sessions.create({ title: "after" });
    await store.close();
  }, 60_000);

  it("doctor reports the files of a backup killed mid-copy as backup_staging, and --fix removes them", async (ctx) => {
    const home = tempHome();
    await storeOf(home, 18);
    mountSmallExt4(join(home, "backups"), 64, join(dirname(home), "backups.img"), ctx);
    const { child, backups } = await backupStoppedOnFullDisk(home);
    await child.kill("SIGKILL");
    rmSync(join(backups, "filler"));
    const debris = ls(backups);
    // The staging copy and the hot -journal SQLite's backup keeps beside it.
    expect(debris.some((n) => /^\.staging-default-\d+-\d+\.tmp$/.test(n))).toBe(true);
    expect(debris.some((n) => /^\.staging-default-\d+-\d+\.tmp-journal$/.test(n))).toBe(true);

    const doctor = await runCli(["--json", "doctor"], { home });
    const finding = doctor
      .json<{ findings: { code: string; severity: string; message: string; fix?: string }[] }>()
      .findings.find((f) => f.code === "backup_staging");
    expect(finding?.severity).toBe("warning");
    for (const name of debris) expect(finding?.message).toContain(name);
    expect(finding?.fix).toContain("hearth doctor --fix");

    const fixed = await runCli(["--json", "doctor", "--fix"], { home });
    expect(fixed.stdout).toContain("backup_staging");
    expect(ls(backups)).toEqual([]);
    // The next backup goes through.
    expect((await runCli(["--json", "backup"], { home })).code).toBe(0);
  }, 60_000);
});

describe("a store on a disk that is already full (Recovery 4.3)", () => {
  it("opening it is HEARTH_NO_SPACE naming the disk; gateway and hearth start exit 78, no crash loop; doctor says free space, never repair", async (ctx) => {
    const mnt = join(dirname(tempHome()), "small");
    mountSmallDisk(mnt, "4m", ctx);
    const home = join(mnt, "home");
    await storeOf(home, 0.1);
    fillDisk(mnt);

    const gateway = await runCli(["--json", "gateway", "run"], { home });
    expect(gateway.code, gateway.stderr).toBe(78);
    const { error } = JSON.parse(gateway.stderr);
    expect(error.code).toBe("HEARTH_NO_SPACE");
    expect(error.details).toEqual({ situation: "open" });
    expect(error.message).toContain(
      `cannot open ${join(home, "state.db")}: the disk holding it is full`,
    );
    expect(error.hint).toContain(`df -h ${home}`);

    const start = await runCli(["start"], { home });
    expect(start.code, start.stderr).toBe(78);
    expect(start.stderr).toContain("exited 78: it refused to run");
    // Each child started once: refused, never restarted.
    const output = `${start.stdout}\n${start.stderr}`;
    const started = output
      .split("\n")
      .filter((l) => l.includes('"child.started"'))
      .map((l) => JSON.parse(l.slice(l.indexOf("{"))).name as string);
    expect(started.length).toBeGreaterThan(0);
    expect(new Set(started).size).toBe(started.length);
    expect(output).toContain("the disk holding it is full");
    expect(output).not.toContain("disk I/O error");

    const doctor = await runCli(["--json", "doctor"], { home });
    const findings = doctor.json<{ findings: { code: string; severity: string; fix?: string }[] }>()
      .findings;
    const full = findings.find((f) => f.code === "disk_full");
    expect(full?.severity).toBe("error");
    expect(full?.fix).toContain("free space");
    expect(findings.filter((f) => f.fix?.includes("sessions repair"))).toEqual([]);
  }, 60_000);
});

import { randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  currentIdentity,
  liveness,
  type ProcessIdentity,
  parseStat,
  readBootId,
} from "../../src/process/identity.js";
import { spawnChild, until } from "../helpers/process.js";

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function readStat(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, "utf8");
}

/** The identity of a running process as another process would record it. */
function identityOf(pid: number): ProcessIdentity {
  const stat = parseStat(readStat(pid));
  const bootId = readBootId();
  if (!stat || !bootId) throw new Error(`cannot read the identity of pid ${pid}`);
  return { pid, startTicks: stat.startTicks, bootId };
}

/** A stat line: pid, (comm), then fields 3.. with state and field 22 as given. */
function statLine(pid: number, comm: string, state: string, startTicks: number): string {
  const fields = [
    state,
    ...Array.from({ length: 18 }, (_, i) => String(i + 1)),
    String(startTicks),
  ];
  return `${pid} (${comm}) ${fields.join(" ")} 1191112704 20000 0 0\n`;
}

describe("parseStat", () => {
  it("reads state and start ticks after the last ')' whatever comm holds", () => {
    // A naive parse after the first ')' would read state "Z" here.
    expect(parseStat(statLine(42, "x) Z 1 2 3", "S", 555))).toEqual({
      state: "S",
      startTicks: 555,
    });
    expect(parseStat(statLine(42, "a b) (c) d", "R", 9_876_543))).toEqual({
      state: "R",
      startTicks: 9_876_543,
    });
    expect(parseStat(statLine(7, ")", "Z", 1))).toEqual({ state: "Z", startTicks: 1 });
    expect(parseStat(statLine(7, " ", "D", 0))).toEqual({ state: "D", startTicks: 0 });
  });

  it("returns undefined without a ')' or without field 22", () => {
    expect(parseStat("42 x S 1 2 3")).toBeUndefined();
    expect(parseStat("42 (x) S 1 2 3")).toBeUndefined();
    expect(parseStat("")).toBeUndefined();
  });

  it("parses a live process whose comm has spaces and ')' in it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-comm-"));
    dirs.push(dir);
    // comm is the executable's name: this one makes a naive parser see a zombie.
    const comm = "x) Z 1 2 3";
    const exe = join(dir, comm);
    copyFileSync("/bin/sleep", exe);
    chmodSync(exe, 0o755);
    const pid = spawnChild(exe, ["30"]).pid;
    await until("the copied sleep to exec", () => readStat(pid).startsWith(`${pid} (${comm}) `));

    const stat = parseStat(readStat(pid));
    expect(stat?.state).toMatch(/^[RS]$/);
    // It started after this process and before now (USER_HZ is 100).
    const uptimeTicks = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100;
    expect(stat!.startTicks).toBeGreaterThanOrEqual(currentIdentity()!.startTicks);
    expect(stat!.startTicks).toBeLessThanOrEqual(Math.ceil(uptimeTicks) + 1);
    expect(liveness(identityOf(pid))).toBe("alive");
  });
});

describe("liveness (P1)", () => {
  it("says this process is alive", () => {
    const self = currentIdentity();
    expect(self).toBeDefined();
    expect(self!.pid).toBe(process.pid);
    expect(self!.bootId).toBe(readBootId());
    expect(liveness(self!)).toBe("alive");
  });

  it("says a record with this pid but other start ticks is dead (a recycled pid)", () => {
    const self = currentIdentity()!;
    expect(liveness({ ...self, startTicks: self.startTicks - 1 })).toBe("dead");
    expect(liveness({ ...self, startTicks: self.startTicks + 1 })).toBe("dead");
    expect(liveness({ ...self, startTicks: 0 })).toBe("dead");
  });

  it("says a record from another boot is dead, even with this pid and start ticks", () => {
    const self = currentIdentity()!;
    const otherBoot = randomUUID();
    expect(otherBoot).not.toBe(readBootId());
    expect(liveness({ ...self, bootId: otherBoot })).toBe("dead");
  });

  it("says a pid that does not exist is dead", () => {
    // Above PID_MAX_LIMIT (2^22): no process can have it.
    const self = currentIdentity()!;
    expect(liveness({ ...self, pid: 2 ** 22 + 1 })).toBe("dead");
  });

  it("says a process that exited and was reaped is dead", async () => {
    const child = spawnChild("sleep", ["30"]);
    const record = identityOf(child.pid);
    expect(liveness(record)).toBe("alive");
    await child.kill("SIGKILL");
    expect(liveness(record)).toBe("dead");
  });

  it("says a zombie is dead while its parent, which never reaps it, is alive", async () => {
    // perl forks a child that exits at once, prints its pid and blocks on stdin: perl
    // reaps nothing until `waitpid`, so the child stays a zombie until stdin closes.
    // (A shell is no good here: dash may reap a finished background job whenever a
    // SIGCHLD interrupts `read`, which once made this test read a vanished pid.)
    const parent = spawnChild("perl", [
      "-e",
      '$| = 1; my $p = fork // die "fork: $!"; exit 0 unless $p; print "$p\\n"; <STDIN>; waitpid($p, 0);',
    ]);
    const zombiePid = Number(await parent.line(() => true, "the child's pid"));
    expect(Number.isInteger(zombiePid) && zombiePid > 0).toBe(true);
    await until(
      "the child to become a zombie",
      () => parseStat(readStat(zombiePid))?.state === "Z",
    );

    // Its real identity (pid, start ticks, boot) still matches: only the state makes it dead.
    const zombie = identityOf(zombiePid);
    expect(liveness(zombie)).toBe("dead");
    expect(liveness(identityOf(parent.pid))).toBe("alive");

    parent.child.stdin.end();
    expect(await parent.exited).toEqual({ code: 0, signal: null });
    expect(liveness(zombie)).toBe("dead");
  });
});

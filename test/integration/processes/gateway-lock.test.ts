import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, readHolders } from "../../../src/index.js";
import { spawnGateway, startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

async function storeHome(): Promise<{ home: string; path: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  const path = store.path;
  await store.close();
  return { home, path };
}

const recordPath = (home: string) => join(home, "run", "gateway.json");
const recordPid = (home: string) =>
  (JSON.parse(readFileSync(recordPath(home), "utf8")) as { pid: number }).pid;

function writeRecord(home: string, fields: { pid: number; startTicks: number; bootId: string }) {
  mkdirSync(join(home, "run"), { recursive: true, mode: 0o700 });
  const record = {
    ...fields,
    argv: ["node", "hearth", "gateway", "run"],
    since: new Date().toISOString(),
    profile: "default",
    dbPath: join(home, "state.db"),
  };
  writeFileSync(recordPath(home), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

function startTicksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

const bootId = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

describe("one gateway per profile (P3)", () => {
  it("refuses a second gateway with exit 78 (a restart cannot fix it), naming the first", async () => {
    const { home } = await storeHome();
    const first = await startGateway(home);
    const second = spawnGateway(home);
    const outcome = await Promise.race([
      second.ready.then(() => "ready"),
      second.exited.then(() => "exited"),
    ]);
    expect(outcome).toBe("exited");
    const { code } = await second.exited;
    expect(code).toBe(78);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain("gateway run");
    expect(second.stderr).toMatch(/since \d{4}-\d\d-\d\dT/);
    // The first one is untouched and still the gateway.
    expect(first.child.exitCode).toBeNull();
    expect(recordPid(home)).toBe(first.pid);
  });

  it("starts at once after the first was killed with SIGKILL", async () => {
    const { home } = await storeHome();
    const first = await startGateway(home);
    await first.kill("SIGKILL");
    // The dead gateway's record is still there: it must not matter.
    expect(recordPid(home)).toBe(first.pid);
    const second = await startGateway(home); // the first attempt, no retry
    expect(recordPid(home)).toBe(second.pid);
  });

  const staleRecords = {
    "a live pid with other start ticks (a recycled pid)": () => ({
      pid: process.pid,
      startTicks: 1,
      bootId: bootId(),
    }),
    "pid 1 from another boot": () => ({
      pid: 1,
      startTicks: startTicksOf(1),
      bootId: "00000000-0000-4000-8000-000000000000",
    }),
  };
  for (const [name, record] of Object.entries(staleRecords)) {
    it(`a stale record never blocks a start: ${name}`, async () => {
      const { home } = await storeHome();
      const stale = record();
      writeRecord(home, stale);
      expect(recordPid(home)).toBe(stale.pid);
      const gateway = await startGateway(home);
      expect(recordPid(home)).toBe(gateway.pid);
    });
  }

  it("stops on SIGTERM with exit 0, leaving no holder and no marker behind", async () => {
    const { home, path } = await storeHome();
    const gateway = await startGateway(home);
    const pid = gateway.pid;
    const mine = () =>
      readdirSync(join(home, "run")).filter(
        (f) => f.startsWith(`${pid}-`) || (f === "gateway.json" && recordPid(home) === pid),
      );
    // While it runs, the kernel and the run directory both know it.
    const before = readHolders(path).holders.find((h) => h.pid === pid);
    expect(before).toMatchObject({ kind: "gateway", roles: expect.arrayContaining(["writer"]) });
    expect(mine().length).toBeGreaterThanOrEqual(2);

    const { code, signal } = await gateway.kill("SIGTERM");
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(gateway.events.map((e) => e.event)).toEqual(["gateway.ready", "gateway.stopped"]);
    const after = readHolders(path);
    expect(after.holders).toEqual([]);
    expect(after.unexplainedLocks).toBe(0);
    expect(mine()).toEqual([]);
    expect(existsSync(recordPath(home))).toBe(false);
  });
});

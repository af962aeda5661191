import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { FsyncPolicy } from "../../src/store/sqlite/wal-sync/policy.js";

// The policy that decides where a commit's fsync runs (src/store/sqlite/wal-sync/policy.ts),
// against this process's real event loop and clock.

const options = { windowMs: 50, busyShare: 0.5, slowMs: 20, holdMs: 150 };

/** Keep the event loop computing for `share` of every 10 ms, for `ms`. */
async function keepLoopBusy(ms: number, share: number, asCommits?: FsyncPolicy): Promise<void> {
  const timer = setInterval(() => {
    const started = performance.now();
    while (performance.now() - started < 10 * share);
    asCommits?.spent(performance.now() - started);
  }, 10);
  await sleep(ms);
  clearInterval(timer);
}

describe("FsyncPolicy: where a commit's fsync runs", () => {
  it("keeps the fsync in the commit on a quiet loop", async () => {
    const policy = new FsyncPolicy(options);
    expect(policy.offLoop()).toBe(false);
    await sleep(120);
    expect(policy.offLoop()).toBe(false);
    expect(policy.last).toBeNull();
  });

  it("moves it off the loop while other work keeps the loop busy, and back when it stops", async () => {
    const policy = new FsyncPolicy(options);
    policy.offLoop();
    // Other work holds the loop for a whole window and more, in one piece: a
    // starved machine can only make it longer (10 ms slices on a timer came
    // out under half the window at load 19).
    const until = performance.now() + 120;
    while (performance.now() < until);
    expect(policy.offLoop()).toBe(true);
    expect(policy.last).toBe("busy-loop");
    await sleep(120);
    policy.offLoop(); // this window was quiet …
    await sleep(60);
    expect(policy.offLoop()).toBe(false); // … and so was the next
  });

  it("does not count the commits' own time as other work", async () => {
    const policy = new FsyncPolicy(options);
    policy.offLoop();
    await keepLoopBusy(120, 0.8, policy);
    expect(policy.offLoop()).toBe(false);
  });

  it("moves it off the loop for holdMs after an fsync of slowMs or more", async () => {
    const policy = new FsyncPolicy(options);
    policy.synced(5);
    expect(policy.offLoop()).toBe(false);
    policy.synced(25);
    expect(policy.offLoop()).toBe(true);
    expect(policy.last).toBe("slow-disk");
    await sleep(80);
    expect(policy.offLoop()).toBe(true);
    await sleep(120);
    expect(policy.offLoop()).toBe(false);
  });

  it("moves it off the loop while a backup runs, asking when it starts watching and then at most once per window", async () => {
    const policy = new FsyncPolicy(options);
    let raised = true;
    let asked = 0;
    policy.watchBackups(() => {
      asked++;
      return raised;
    });
    // Asked when it starts watching: its first commit already knows.
    expect(policy.offLoop()).toBe(true);
    expect(policy.last).toBe("backup");
    await sleep(60);
    for (let i = 0; i < 100; i++) policy.offLoop();
    expect(asked).toBe(2);
    raised = false;
    await sleep(60);
    expect(policy.offLoop()).toBe(false);
  });
  it("names a running backup before a slow disk when both hold", () => {
    const policy = new FsyncPolicy(options);
    policy.watchBackups(() => true);
    policy.synced(options.slowMs);
    expect(policy.offLoop()).toBe(true);
    expect(policy.last).toBe("backup");
  });

  it("keeps the fsync in the commit, whatever the reason, while nothing else can want the loop (issue 44)", async () => {
    let others = false;
    const policy = new FsyncPolicy(options, () => others);
    policy.watchBackups(() => true);
    policy.synced(options.slowMs);
    // A lone writer: a hand-off to the pool would only cost two thread wake-ups.
    expect(policy.offLoop()).toBe(false);
    expect(policy.last).toBeNull();
    // Another write of this store queued behind this one in this process.
    expect(policy.offLoop(undefined, true)).toBe(true);
    expect(policy.last).toBe("backup");
    // A timer, socket or server appears: judged again at the next window.
    others = true;
    await sleep(60);
    expect(policy.offLoop()).toBe(true);
  });

  it("othersOnLoop: a lone process's own file work does not want the loop; a ref'd timer or a server does", () => {
    // In a process of its own: the test runner's channels and timers would answer for it here.
    const policy = pathToFileURL(
      join(import.meta.dirname, "../../dist/store/sqlite/wal-sync/policy.js"),
    );
    const script = `
      import { fsync, openSync } from "node:fs";
      import { createServer } from "node:net";
      const { othersOnLoop } = await import(${JSON.stringify(policy.href)});
      const fd = openSync(process.execPath, "r");
      console.log("standard output and error are synchronous");
      console.error("on Linux");
      const seen = [othersOnLoop()];
      fsync(fd, () => {});
      seen.push(othersOnLoop()); // its own fsync in flight
      const timer = setInterval(() => {}, 1000);
      seen.push(othersOnLoop());
      clearInterval(timer);
      const unref = setInterval(() => {}, 1000).unref();
      seen.push(othersOnLoop());
      clearInterval(unref);
      const server = createServer().listen(0, "127.0.0.1", () => {
        seen.push(othersOnLoop());
        server.close();
        console.log(JSON.stringify(seen));
        process.stdin.resume(); // reading stdin waits for the loop
        console.log(JSON.stringify(othersOnLoop()));
        process.stdin.pause();
        process.stdin.destroy();
      });`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
    }).split("\n");
    expect(JSON.parse(out[1]!)).toEqual([false, false, true, false, true]);
    expect(JSON.parse(out[2]!)).toBe(true);
  });
});

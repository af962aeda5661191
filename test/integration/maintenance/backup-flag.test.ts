import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { profileDir } from "../../../src/config/paths.js";
import { backup } from "../../../src/ops/backup.js";
import { backupFlagRaised, raiseBackupFlag } from "../../../src/process/backup-flag.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { Child, run } from "../../helpers/process.js";

// The flag an online backup raises for the writers of its profile
// (src/process/backup-flag.ts): a shared OFD lock on run/backup.lock.

const FLAG = join(import.meta.dirname, "../../../dist/process/backup-flag.js");

/** What another process sees: node asks backupFlagRaised(dir) and prints it. */
async function seenElsewhere(dir: string): Promise<boolean> {
  const script = `import { backupFlagRaised } from ${JSON.stringify(FLAG)}; console.log(backupFlagRaised(${JSON.stringify(dir)}));`;
  const result = await run(process.execPath, ["--input-type=module", "-e", script]);
  expect(result.stderr).toBe("");
  return result.stdout.trim() === "true";
}

describe("the backup flag", () => {
  it("is seen by other processes and by other descriptors of this one while raised, and not after", async () => {
    const dir = profileDir(tempHome(), "default");
    expect(backupFlagRaised(dir)).toBe(false); // no flag file yet
    const lower = await raiseBackupFlag(dir);
    expect(backupFlagRaised(dir)).toBe(true);
    expect(await seenElsewhere(dir)).toBe(true);
    // Asking twice does not take it down (the probe's try-lock is let go at once).
    expect(backupFlagRaised(dir)).toBe(true);
    lower();
    expect(backupFlagRaised(dir)).toBe(false);
    expect(await seenElsewhere(dir)).toBe(false);
  });

  it("comes down when the process that raised it is killed", async () => {
    const dir = profileDir(tempHome(), "default");
    const script = `import { raiseBackupFlag } from ${JSON.stringify(FLAG)}; await raiseBackupFlag(${JSON.stringify(dir)}); console.log("raised"); setInterval(() => {}, 1000);`;
    const child = new Child(process.execPath, ["--input-type=module", "-e", script]);
    await child.line((l) => l === "raised");
    expect(backupFlagRaised(dir)).toBe(true);
    await child.kill("SIGKILL");
    expect(backupFlagRaised(dir)).toBe(false);
  });

  it("is up while backup() copies, and a writer of the profile then fsyncs off the loop", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const dir = profileDir(home, store.profile);
    const s = await store.sessions.create({ title: "flag" });
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 500 }, (_, i) => ({ role: "user" as const, content: `${i}` })),
    );
    const seen: boolean[] = [];
    await backup(store, { onProgress: () => seen.push(backupFlagRaised(dir)) });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(Boolean)).toBe(true);
    expect(backupFlagRaised(dir)).toBe(false);

    // The writer asks once per 100 ms window: raise the flag as copyTo does,
    // let a window pass, write.
    const lower = await raiseBackupFlag(dir);
    await sleep(120);
    await store.messages.append(s.id, { role: "user", content: "during" });
    expect((await store.durability()).offLoop.lastFsync).toEqual({ on: "pool", reason: "backup" });
    lower();
    await sleep(120);
    await store.messages.append(s.id, { role: "user", content: "after" });
    // Off the loop again only for a reason of this machine's own (a slow
    // fsync or a busy loop on a shared host), never for the lowered flag.
    const after = (await store.durability()).offLoop.lastFsync;
    expect(after?.reason).not.toBe("backup");
    if (after?.on === "pool") expect(["slow-disk", "busy-loop"]).toContain(after.reason);
    else expect(after).toEqual({ on: "loop", reason: null });
    await store.close();
  });
});

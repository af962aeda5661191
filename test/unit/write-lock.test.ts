import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fsx from "fs-native-extensions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TURNSTILE_OFFSET, WRITE_OFFSET } from "../../src/process/lock-map.js";
import { FairWriteLock } from "../../src/process/write-lock.js";

// FairWriteLock.run's synchronous path (nobody ahead, the kernel grants at
// once, the function returns a value): the write byte must be let go before
// run() returns, on success and on a throw, and the writers queued behind a
// running one must still go in order. Real OFD locks on a real file: a
// second open file description stands for another process (OFD locks
// conflict between descriptions, even in one process).

let dir: string;
let path: string;
let fd: number;
let other: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-write-lock-"));
  path = join(dir, "db");
  writeFileSync(path, "");
  fd = openSync(path, constants.O_RDWR);
  other = openSync(path, constants.O_RDWR);
});

afterEach(() => {
  closeSync(fd);
  closeSync(other);
  rmSync(dir, { recursive: true, force: true });
});

const timeout = () => new Error("timed out");

/** Whether another description could take the write byte now (and lets it go again). */
function writeByteFree(): boolean {
  if (!fsx.tryLock(other, WRITE_OFFSET, 1)) return false;
  fsx.unlock(other, WRITE_OFFSET, 1);
  return true;
}

describe("FairWriteLock.run", () => {
  it("holds the write byte (not the turnstile) while a function runs, and lets it go before returning", async () => {
    const lock = new FairWriteLock(() => fd, timeout);
    const seen: boolean[] = [];
    const turnstileFree: boolean[] = [];
    const result = lock.run(() => {
      seen.push(writeByteFree());
      turnstileFree.push(fsx.tryLock(other, TURNSTILE_OFFSET, 1));
      fsx.unlock(other, TURNSTILE_OFFSET, 1);
      return 42;
    }, 1000);
    expect(writeByteFree()).toBe(true); // before any await
    await expect(result).resolves.toBe(42);
    expect(seen).toEqual([false]);
    expect(turnstileFree).toEqual([true]);
  });

  it("rejects with what the function threw, and lets the lock go for the next writer", async () => {
    const lock = new FairWriteLock(() => fd, timeout);
    const failed = lock.run(() => {
      throw new Error("boom");
    }, 1000);
    expect(writeByteFree()).toBe(true);
    await expect(failed).rejects.toThrow("boom");
    await expect(lock.run(() => "next", 1000)).resolves.toBe("next");
  });

  it("queues the writers of this process behind a running one, in order, and waits for another holder", async () => {
    const lock = new FairWriteLock(() => fd, timeout);
    const order: string[] = [];
    let finish!: () => void;
    const first = lock.run(
      () =>
        new Promise<void>((resolve) => {
          order.push("first");
          finish = resolve;
        }),
      1000,
    );
    const second = lock.run(() => order.push("second"), 1000);
    const third = lock.run(() => order.push("third"), 1000);
    expect(lock.queued).toBe(2);
    expect(writeByteFree()).toBe(false); // the first holds it until its promise settles
    finish();
    await Promise.all([first, second, third]);
    expect(order).toEqual(["first", "second", "third"]);
    expect(writeByteFree()).toBe(true);

    // Another description holds the write byte: no synchronous run, a wait, then the write.
    expect(fsx.tryLock(other, WRITE_OFFSET, 1)).toBe(true);
    let ran = false;
    const waited = lock.run(() => {
      ran = true;
    }, 5000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toBe(false);
    fsx.unlock(other, WRITE_OFFSET, 1);
    await waited;
    expect(ran).toBe(true);
    expect(writeByteFree()).toBe(true);
  });

  it("gives up after the patience when another holder keeps the write byte, and leaves the lock usable", async () => {
    const lock = new FairWriteLock(() => fd, timeout);
    expect(fsx.tryLock(other, WRITE_OFFSET, 1)).toBe(true);
    await expect(lock.run(() => "never", 50)).rejects.toThrow("timed out");
    fsx.unlock(other, WRITE_OFFSET, 1);
    // The kernel wait given up on is handed back when granted; the next run gets the lock.
    await expect(lock.run(() => "after", 5000)).resolves.toBe("after");
    expect(writeByteFree()).toBe(true);
  });
});

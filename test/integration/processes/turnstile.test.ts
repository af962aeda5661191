import { closeSync, constants, openSync, readFileSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { TURNSTILE_OFFSET, WRITE_OFFSET } from "../../../src/process/lock-map.js";
import { FairWriteLock } from "../../../src/process/write-lock.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

/** True when /proc/locks shows an OFD lock starting at `offset` on inode `ino`. */
function lockedAt(ino: number, offset: number): boolean {
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .some((line) => line.includes("OFDLCK") && new RegExp(`:${ino} ${offset} `).test(line));
}

/** True when /proc/locks shows a process blocked waiting for the write byte on inode `ino`. */
function waiting(ino: number): boolean {
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .some((line) => line.includes("->") && new RegExp(`:${ino} ${WRITE_OFFSET} `).test(line));
}

async function until(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("the write lock's turnstile", () => {
  it("a writer that just released the write lock cannot overtake the writer queued for it", async () => {
    const home = tempHome();
    const setup = await openStore({ home });
    const session = await setup.sessions.create({ title: "turnstile" });
    const path = setup.path;
    await setup.close();
    const ino = statSync(path).ino;

    // Writer A: this process, with the same lock protocol on its own descriptor
    // (it opens no SQLite connection to the store while it holds the lock).
    const fd = openSync(path, constants.O_RDWR);
    const reader = new Database(path, { readonly: true });
    const stored = (content: string) =>
      (
        reader
          .prepare("SELECT count(*) AS n FROM messages WHERE session_id = ? AND content = ?")
          .get(session.id, content) as { n: number }
      ).n;
    try {
      const a = new FairWriteLock(
        () => fd,
        () => new Error("writer A waited too long"),
      );
      const b = await startWorker();
      await b.call("open", { home });
      // Without the turnstile, A's second request races B's wake-up in the
      // kernel and often wins: a few rounds make that a near-certain failure.
      for (let round = 0; round < 6; round++) {
        let release!: () => void;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const first = a.run(() => held, 20_000);

        // Writer B, another process, queues behind A: it passes the turnstile and waits for the write byte.
        const content = `b${round}`;
        const appended = b.call("append", { sessionId: session.id, content });
        await until(() => lockedAt(ino, TURNSTILE_OFFSET) || waiting(ino), "writer B queued");

        // A lets go and at once wants the lock again: B, queued first, must write first.
        release();
        await first;
        const seenByA = await a.run(() => stored(content), 20_000);
        await appended;
        expect(seenByA, `round ${round}: A overtook B`).toBe(1);
      }
      await b.call("close");
    } finally {
      reader.close();
      closeSync(fd);
    }
  });
});

import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MergeDebt } from "../../../src/store/sqlite/fts-merge.js";
import { findEntry } from "../../../src/store/sqlite/registry.js";
import { checkpointThreadUp } from "../../../src/store/sqlite/wal-sync/checkpointer.js";
import { FSYNC_POLICY } from "../../../src/store/sqlite/wal-sync/policy.js";
import { WalSync } from "../../../src/store/sqlite/wal-sync/sync.js";
import { WalLength } from "../../../src/store/sqlite/wal-sync/wal-length.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// A checkpoint job takes the search-index merge it owes when it gets the
// write lock. A job that then does not run (the thread died, or the file is
// not the one the writer holds: the thread refuses it, F3) merged nothing,
// and the next job must owe those chunks again, or the index's segments pile
// up until FTS5's crisis merge runs inside a commit.
describe("a checkpoint job that does not run keeps its search-index merge owed", () => {
  it("gives the chunks it took back when the thread refuses the job", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "normal" } },
    });
    try {
      const session = await store.sessions.create({ title: "debt" });
      await store.messages.append(session.id, { role: "user", content: "frames in the WAL" });
      const { dev, ino } = statSync(store.path);
      const entry = findEntry(`${dev}:${ino}`);
      expect(entry?.guard).toBeDefined();
      const debt = new MergeDebt();
      debt.add(400); // two chunks of 1,000 pages owed
      // The real store's files, locks and guard; a key naming another inode,
      // which the checkpoint thread refuses (the job does not run).
      const sync = new WalSync(
        {
          path: store.path,
          key: "0:0",
          guard: entry!.guard,
          locks: entry!.locks,
          searchMerges: debt,
          walLength: new WalLength(),
        },
        {
          fsync: false,
          policy: FSYNC_POLICY,
          inlineCheckpoints: false,
          synchronous: "normal",
          pages: 1,
          truncateAbove: -1,
          patienceMs: 5_000,
          checkpointHere: () => ({ ok: false, message: "not here" }),
        },
      );
      for (let i = 0; i < 200 && !checkpointThreadUp(); i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(checkpointThreadUp()).toBe(true);
      // The commit starts the checkpoint's passes, which the thread refuses;
      // their reply asks for the final job, which takes the chunks under the
      // write lock and is refused too. settled() waits for both.
      await sync.afterCommit({ mode: "loop", reason: null }, 0, 0);
      await sync.settled();
      expect(debt.stats("thread")).toMatchObject({ asked: 0, merged: 0 });
      expect(debt.take(3)).toBe(2_000);
    } finally {
      await store.close();
    }
  });
});

// Without a WalSync (syncOffLoop false) the writer merges inside its own
// write transactions. The debt counts the rows a transaction's statements
// changed: 5 pages each, a 1,000-page chunk about every 50 appends of this
// shape. Counting also the segment FTS5 writes at COMMIT, or a merge's own
// rows, would merge about every 20.
describe("the writer's own merges follow the debt of its writes", () => {
  it("200 appends merge at most 5 chunks", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "normal", syncOffLoop: false } },
    });
    try {
      const session = await store.sessions.create({ title: "cadence" });
      const words = (i: number) =>
        Array.from({ length: 12 }, (_, k) => `w${(i * 7 + k * 131) % 5000}`).join(" ");
      for (let i = 0; i < 200; i++)
        await store.messages.append(session.id, { role: "user", content: `${i} ${words(i)}` });
      const merges = (await store.durability()).searchMerges;
      expect(merges?.by).toBe("writer");
      expect(merges?.asked).toBeGreaterThanOrEqual(1);
      expect(merges?.asked).toBeLessThanOrEqual(5);
    } finally {
      await store.close();
    }
  });
});

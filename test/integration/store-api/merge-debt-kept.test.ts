import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MergeDebt } from "../../../src/store/fts-merge.js";
import { findEntry } from "../../../src/store/registry.js";
import { checkpointThreadUp } from "../../../src/store/wal-sync/checkpointer.js";
import { FSYNC_POLICY } from "../../../src/store/wal-sync/policy.js";
import { WalSync } from "../../../src/store/wal-sync/sync.js";
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
        },
        {
          fsync: false,
          policy: FSYNC_POLICY,
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
      await sync.afterCommit({ mode: "loop", reason: null }, 0, 0);
      await sync.settled();
      expect(debt.stats("thread")).toMatchObject({ asked: 0, merged: 0 });
      expect(debt.take(3)).toBe(2_000);
    } finally {
      await store.close();
    }
  });
});

import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// durability.checkpointOffLoop "with-fsync" (not the default since issue 44, src/store/sqlite/wal-sync/sync.ts):
// a commit whose fsync the policy keeps on a quiet loop checkpoints inside
// itself too, as SQLite would, unless the database or its WAL is large.
// The syscall traces of this behaviour (and of the busy loop that never
// checkpoints there) are in sync-off-loop.test.ts.

describe("checkpoints inside a quiet commit (issue 15)", () => {
  it('checkpoints inside quiet commits ("with-fsync") keep the WAL bounded too, and durability() says where they ran', async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      // The default journal size limit: past 256 KiB (under two thresholds of
      // 100 pages) a WAL counts as grown, which sends checkpoints to the thread.
      config: { durability: { walAutocheckpointPages: 100, checkpointOffLoop: "with-fsync" } },
    });
    try {
      const session = await store.sessions.create({ title: "bounded inline" });
      const body = "y".repeat(6000);
      let largest = 0;
      for (let i = 0; i < 1500; i++) {
        await store.messages.append(session.id, { role: "user", content: `${i} ${body}` });
        // Not at every write: a stat of the WAL dirties its inode at the next commit (guard.ts).
        if (i % 10 === 0) largest = Math.max(largest, statSync(`${store.path}-wal`).size);
      }
      expect(largest).toBeLessThan(2 * 1024 * 1024);
      // Quiet: fsync and checkpoint inside the commit. After a slow fsync, or
      // in a window a loaded machine made busy, both off the loop (and the
      // thread's checkpoint then started may still run at the last commit):
      // a checkpoint inside a commit only ever comes with the fsync there.
      const { lastFsync, lastCheckpoint } = (await store.durability()).offLoop;
      expect(["commit", "thread"]).toContain(lastCheckpoint);
      if (lastCheckpoint === "commit") expect(lastFsync).toEqual({ on: "loop", reason: null });
    } finally {
      await store.close();
    }
  });

  it("a database over 64 MiB leaves every checkpoint to the thread, however quiet the loop", async () => {
    // The pages of a large store are less likely to be in memory, and its
    // search-index merges are larger: inside a commit they would stall the
    // loop (INLINE_MAX_DB_BYTES in src/store/sqlite/wal-sync/sync.ts).
    const home = tempHome();
    const first = await openSqliteStore({ home });
    const path = first.path;
    await first.close();
    const raw = new Database(path);
    raw.exec(
      "CREATE TABLE padding (x BLOB); INSERT INTO padding VALUES (zeroblob(70 * 1024 * 1024))",
    );
    raw.close();
    const store = await openSqliteStore({
      home,
      config: { durability: { walAutocheckpointPages: 100, checkpointOffLoop: "with-fsync" } },
    });
    try {
      const session = await store.sessions.create({ title: "large" });
      for (let i = 0; i < 300; i++)
        await store.messages.append(session.id, {
          role: "user",
          content: `${i} ${"q".repeat(6000)}`,
        });
      const { lastFsync, lastCheckpoint } = (await store.durability()).offLoop;
      expect(lastFsync?.on === "loop" || lastFsync?.reason === "slow-disk").toBe(true);
      expect(lastCheckpoint).toBe("thread");
    } finally {
      await store.close();
    }
  });
});

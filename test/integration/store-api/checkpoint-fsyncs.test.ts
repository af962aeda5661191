import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { type Call, traceFixture } from "../../helpers/strace.js";

// The checkpoint thread's fsyncs (issue 44): its search-index merge commits
// just before the final job's checkpoint, which fsyncs the WAL before it
// copies a frame, under the write lock. The merge's commit needs no fsync of
// its own (src/store/sqlite/wal-sync/checkpoint-thread.ts, mergeFirst). The
// proof is a syscall trace of a real writer process at synchronous FULL.

const FIXTURE = join(import.meta.dirname, "../../fixtures/off-loop-writer.mjs");

const isSync = (c: Call) => c.name === "fsync" || c.name === "fdatasync";
const onWal = (c: Call) => c.file.endsWith("state.db-wal");
const onDb = (c: Call) => c.file.endsWith("state.db");

describe("the checkpoint thread's fsyncs", () => {
  it(
    "its search-index merge commits write the WAL without an fsync of their own; each checkpoint syncs the WAL once per copy",
    { timeout: 120_000 },
    async () => {
      const { calls, main, result } = await traceFixture(
        FIXTURE,
        { home: tempHome(), syncOffLoop: true, count: 600, synchronous: "full" },
        "pwrite64,fsync,fdatasync",
      );
      const thread = calls.filter((c) => c.tid !== main && (onWal(c) || onDb(c)));
      // The merges ran and committed on the thread: it wrote frames to the WAL.
      expect(result.stdout).toMatch(/^merges .*"merged":[1-9]/m);
      const mergeWrites = thread.filter((c) => c.name === "pwrite64" && onWal(c));
      expect(mergeWrites.length).toBeGreaterThan(0);
      // A merge commit's own fsync would come right after its writes to the
      // WAL and right before the checkpoint's fsync of the WAL (which comes
      // before its copy, under the same write lock): two WAL fsyncs in a row
      // after the merge's frames. (Not the sync of a new WAL's 32-byte
      // header, which SQLite makes at every level but OFF when a commit
      // starts the WAL over: frames follow it.)
      let commitSyncs = 0;
      let walSyncs = 0;
      for (let i = 0; i < thread.length; i++) {
        const c = thread[i]!;
        if (!isSync(c) || !onWal(c)) continue;
        walSyncs++;
        const before = thread[i - 1];
        const after = thread[i + 1];
        const afterFrames =
          before?.name === "pwrite64" && onWal(before) && !/ = 32$/.test(before.text);
        if (afterFrames && after && isSync(after) && onWal(after)) commitSyncs++;
      }
      expect(commitSyncs).toBe(0);
      const dbSyncs = thread.filter((c) => isSync(c) && onDb(c)).length;
      expect(dbSyncs).toBeGreaterThan(2);
      expect(walSyncs).toBeGreaterThan(0);
    },
  );
});

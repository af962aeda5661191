/**
 * The replicator lets the WAL start over when this process's commits make
 * it RESTART_THRESHOLDS long, not only at its tick (issue 44: at the 1 s
 * tick, a fast writer grew the WAL ~24,000 frames between ticks, and each
 * commit that extends the file costs its writer more). The interval here is
 * 60 s: every restart the tests count came from a commit.
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import type { SqliteStore } from "../../../src/store/sqlite/store.js";
import { checkpointThreadUp } from "../../../src/store/sqlite/wal-sync/checkpointer.js";
import { walLength } from "../../../src/store/sqlite/wal-sync/wal-length.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";

/** The checkpoint threshold of the second test: its WAL stays under the 8 thresholds past which checkpoints wait for readers. */
const PAGES = 256;
/** The WAL's length at which the replicator lets it start over (RESTART_THRESHOLDS of them). */
const RESTART_FRAMES = 2 * PAGES;

describe("replication beside a fast writer", () => {
  it("starts the WAL over from the writer's commits between ticks, and the restore equals the store", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({ home, config: replicaConfig(dir) });
    const replication = await replicating(store, home);
    try {
      const session = await store.sessions.create({ title: "early" });
      await replication.tick(); // the generation begins; the next timer tick is 60 s away
      const counters = () => replication.counters()[0]!;
      expect(counters().restarts).toBe(0);
      let appends = 0;
      // Commits until three restarts came of them (each wake is a tick off the commit's path).
      while (counters().restarts < 3 && appends < 1_500) {
        await store.messages.append(session.id, {
          role: "user",
          content: `m${appends++} ${"w".repeat(400)}`,
        });
      }
      expect(counters().restarts).toBeGreaterThanOrEqual(3);
      // Each restart let the WAL start over: the stream went on in later WALs, no generation broke.
      const status = replication.statuses()[0]!;
      expect(status.lastError).toBeNull();
      expect(counters().started).toBe(1);
      await replication.tick();
      expect(replication.statuses()[0]!.walSeq).toBeGreaterThanOrEqual(2);
      const expected = rows(store.path);
      expect(expected).toHaveLength(appends);
      const target = await openTarget(targetConfig(store.config, "offsite"), home);
      const into = join(mkdtempSync(join(tmpdir(), "hearth-early-")), "home");
      const restored = await restoreIntoNewHome(target, "default", undefined, into, store.config);
      expect(rows(restored.path)).toEqual(expected);
    } finally {
      await replication.stop();
      await store.close();
    }
  });

  it("while a reader keeps the WAL from starting over, waits a threshold of frames before it tries again, not one commit", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({
      home,
      config: { ...replicaConfig(dir), durability: { walAutocheckpointPages: PAGES } },
    });
    const replication = await replicating(store, home);
    const length = (store as SqliteStore)[walLength];
    const reader = new Database(store.path, { readonly: true });
    const restarts = () => replication.counters()[0]!.restarts;
    const append = (content: string) =>
      store.messages.append(session.id, { role: "user", content: `${content} ${"h".repeat(400)}` });
    const session = await store.sessions.create({ title: "held" });
    try {
      await append("before the reader");
      // A restart needs the checkpoint thread (the process's first store starts it).
      for (let i = 0; i < 400 && !checkpointThreadUp(); i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(checkpointThreadUp()).toBe(true);
      await replication.tick();
      // 1. A read transaction on a snapshot early in the WAL: no checkpoint copies past it.
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM messages").get();
      for (let i = 0; i < 100; i++) await append(`a${i}`);
      await replication.tick(); // (joins an early tick under way)
      await replication.tick(); // one that began after every append
      expect(walFrames(store.path)).toBeGreaterThan(RESTART_FRAMES);
      expect(restarts()).toBeGreaterThanOrEqual(1);
      // The copy was not whole: the next try waits for a threshold past what is shipped.
      expect(length.threshold).toBeGreaterThan(walFrames(store.path));
      const tried = restarts();
      await append("one more");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(restarts()).toBe(tried);

      // 2. A reader of the WAL's newest snapshot: a copy is whole, yet the WAL cannot start over.
      reader.exec("COMMIT");
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM messages").get();
      await replication.tick(); // a whole copy: the WAL should start over at the next commit
      expect(length.threshold).toBe(RESTART_FRAMES);
      await replication.tick(); // it did not (the reader): a second whole copy in the same WAL
      expect(restarts()).toBe(tried + 2);
      expect(length.threshold).toBeGreaterThan(walFrames(store.path));
      await append("after the second copy");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(restarts()).toBe(tried + 2);
      expect(replication.statuses()[0]!.lastError).toBeNull();
    } finally {
      if (reader.inTransaction) reader.exec("COMMIT");
      reader.close();
      await replication.stop();
      await store.close();
    }
  });
});

/** Frames in the WAL file (it only grows here: a reader keeps it from starting over). */
function walFrames(path: string): number {
  const size = statSync(`${path}-wal`).size;
  return (size - 32) / (4096 + 24);
}

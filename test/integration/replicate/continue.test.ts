import { closeSync, mkdtempSync, openSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import type { Store } from "../../../src/store/api.js";
import { parseWalHeader } from "../../../src/store/sqlite/wal-ship/wal-file.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";
import { startWorker } from "../../helpers/worker.js";

/** The WAL header's checkpoint sequence: the start-over count of the connection that wrote its first frame. */
function checkpointSeq(path: string): number {
  const fd = openSync(`${path}-wal`, "r");
  try {
    const b = Buffer.alloc(32);
    readSync(fd, b, 0, 32, 0);
    return parseWalHeader(b)?.checkpointSeq ?? -1;
  } finally {
    closeSync(fd);
  }
}

async function append(store: Store, sessionId: string, prefix: string, n: number) {
  for (let i = 0; i < n; i++)
    await store.messages.append(sessionId, {
      role: "user",
      content: `${prefix}${i} ${"y".repeat(300)}`,
    });
}

/** A replicator run to its end: what it shipped, the generation it shipped it in. */
async function replicateOnce(store: Store, home: string): Promise<string> {
  const replication = await replicating(store, home);
  await replication.tick();
  const status = replication.statuses()[0]!;
  expect(status.lastError).toBeNull();
  await replication.stop();
  return status.generation!;
}

async function restored(store: Store, home: string): Promise<unknown[]> {
  const target = await openTarget(targetConfig(store.config, "offsite"), home);
  const into = join(mkdtempSync(join(tmpdir(), "hearth-continue-")), "home");
  return rows((await restoreIntoNewHome(target, "default", undefined, into, store.config)).path);
}

describe("a replicator started again", () => {
  it("continues the target's generation when the WAL still holds its last shipped frame", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    // A large checkpoint threshold: the WAL does not start over between the two runs.
    const store = await openStore({
      home,
      config: { ...replicaConfig(dir), durability: { walAutocheckpointPages: 100_000 } },
    });
    const session = await store.sessions.create({ title: "continue" });
    await append(store, session.id, "a", 20);
    const first = await replicateOnce(store, home);
    // Written while no replicator ran (a gateway restarting, or down after a crash).
    await append(store, session.id, "b", 20);
    const second = await replicateOnce(store, home);
    expect(second).toBe(first);
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const replica = await listReplica(target, "default");
    expect(new Set(replica.snapshots.map((s) => s.generation))).toEqual(new Set([first]));
    expect(replica.snapshots).toHaveLength(1);
    const expected = rows(store.path);
    expect(expected).toHaveLength(40);
    expect(await restored(store, home)).toEqual(expected);
    await store.close();
  });

  it("starts a new generation when the WAL started over while none ran (it cannot tell what was copied away)", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({
      home,
      config: { ...replicaConfig(dir), durability: { walAutocheckpointPages: 100_000 } },
    });
    const session = await store.sessions.create({ title: "restarted" });
    await append(store, session.id, "a", 20);
    const first = await replicateOnce(store, home);
    // Unshipped writes copied into the database and the WAL started over, then longer
    // than what was shipped of the old one: its frames past the shipped position are others.
    await append(store, session.id, "b", 10);
    const other = new Database(store.path);
    other.pragma("wal_checkpoint(TRUNCATE)");
    other.close();
    await append(store, session.id, "c", 40);
    const second = await replicateOnce(store, home);
    const expected = rows(store.path);
    expect(expected).toHaveLength(70);
    expect(await restored(store, home)).toEqual(expected);
    expect(second).not.toBe(first);
    await store.close();
  });

  // SQLite adds 1 to salt-1 at each start over, whoever does it; the header's
  // checkpoint sequence is the count of the connection that wrote the first
  // frame. A CLI command (another process, a fresh connection) that is the
  // first writer after everything was checkpointed writes 1 there: the
  // replicator took that for a gap and abandoned its generation.
  it("keeps its generation when another process's fresh connection starts the WAL over", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({ home, config: replicaConfig(dir) });
    const session = await store.sessions.create({ title: "fresh connection" });
    const replication = await replicating(store, home);
    const worker = await startWorker();
    try {
      // This process's writer starts the WAL over itself until its count passes 1.
      for (let i = 0; i < 40 && checkpointSeq(store.path) < 2; i++) {
        await append(store, session.id, `a${i}-`, 4);
        await replication.tick();
      }
      expect(checkpointSeq(store.path)).toBeGreaterThanOrEqual(2);
      await replication.tick();
      const first = replication.statuses()[0]!.generation;
      expect(first).toBeTruthy();
      // Every frame shipped and copied into the database: the next writer starts the WAL over.
      const other = new Database(store.path);
      other.pragma("wal_checkpoint(PASSIVE)");
      other.close();
      await worker.call("open", { home });
      await worker.call("create", { title: "from another process" });
      expect(checkpointSeq(store.path)).toBe(1);
      await replication.tick();
      const status = replication.statuses()[0]!;
      expect(status.lastError).toBeNull();
      expect(status.generation).toBe(first);
      await append(store, session.id, "b", 5);
      await replication.tick();
      expect(replication.statuses()[0]!.generation).toBe(first);
      const target = await openTarget(targetConfig(store.config, "offsite"), home);
      const replica = await listReplica(target, "default");
      expect(new Set(replica.snapshots.map((s) => s.generation))).toEqual(new Set([first]));
      await worker.kill();
      const expected = rows(store.path);
      expect(await restored(store, home)).toEqual(expected);
    } finally {
      await worker.kill();
      await replication.stop();
      await store.close();
    }
  });
});

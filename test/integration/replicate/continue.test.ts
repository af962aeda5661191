import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import type { Store } from "../../../src/store/api.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";

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
});

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";

describe("continuous replication to a directory target", () => {
  it("restores to every 10th commit of a run, row by row", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const config = replicaConfig(dir);
    const store = await openStore({ home, config });
    const replication = await replicating(store, home);
    const session = await store.sessions.create({ title: "pitr" });
    const points: { at: number; rows: unknown[] }[] = [];
    for (let i = 1; i <= 120; i++) {
      await store.messages.append(session.id, {
        role: "user",
        content: `message ${i} ${"x".repeat(i % 7 === 0 ? 9000 : 200)}`,
        clientId: `c${i}`,
      });
      await replication.tick();
      if (i % 10 === 0) points.push({ at: Date.now(), rows: rows(store.path) });
      // The next commit is read after this instant: a restore to it must not hold it. Halfway,
      // wait out snapshotIntervalMs (1 s), so that a second snapshot is due however fast the
      // machine (an idle one ran the whole loop in under a second: one snapshot only).
      await new Promise((r) => setTimeout(r, i === 60 ? 1_000 : 2));
    }
    const status = replication.statuses()[0]!;
    expect(status.lastError).toBeNull();
    // The WAL started over during the run (the hold let it, once shipped).
    expect(status.walSeq).toBeGreaterThan(2);
    await replication.stop();
    await store.close();

    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const replica = await listReplica(target, "default");
    expect(replica.snapshots.length).toBeGreaterThan(1);
    for (const [n, point] of points.entries()) {
      const into = join(mkdtempSync(join(tmpdir(), "hearth-pitr-")), "home");
      const restored = await restoreIntoNewHome(target, "default", point.at, into, store.config);
      expect(rows(restored.path), `restore to commit ${(n + 1) * 10}`).toEqual(point.rows);
      expect(restored.counts.messages).toBe((n + 1) * 10);
    }
  });

  it("keeps unshipped frames from a checkpoint of another connection (the hold)", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({ home, config: replicaConfig(dir) });
    const replication = await replicating(store, home);
    const session = await store.sessions.create({ title: "hold" });
    await replication.tick();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20; i++)
        await store.messages.append(session.id, { role: "user", content: `r${round} m${i}` });
      // Another process's checkpoint between two ticks, as hard as SQLite allows:
      // without the hold it copies the unshipped frames and starts the WAL over.
      const other = new Database(store.path);
      other.pragma("busy_timeout = 0");
      other.pragma("wal_checkpoint(TRUNCATE)");
      other.close();
      await replication.tick();
    }
    expect(replication.statuses()[0]!.lastError).toBeNull();
    const expected = rows(store.path);
    await replication.stop();
    await store.close();
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const into = join(mkdtempSync(join(tmpdir(), "hearth-pitr-")), "home");
    const restored = await restoreIntoNewHome(target, "default", undefined, into, store.config);
    expect(rows(restored.path)).toEqual(expected);
  });
});

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { openStore } from "../../../src/index.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import type { ReplicationStatus } from "../../../src/ops/replicate/status.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode, until } from "../../helpers/process.js";
import { replicaConfig, rows, s3Targets } from "../../helpers/replica.js";
import { fillDisk, mountSmallDisk, unmountSmallDisks } from "../../helpers/small-disk.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

const S3RVER = fileURLToPath(new URL("../../fixtures/s3rver.mjs", import.meta.url));
const CREDENTIALS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill("SIGKILL");
  unmountSmallDisks();
});

async function startS3rver(dir: string, port = 0): Promise<{ child: Child; port: number }> {
  const child = spawnNode([S3RVER, dir, String(port), "hearth"]);
  children.push(child);
  const ready = await child.json<{ ready?: boolean; port: number }>(
    (l) => l.ready === true,
    "s3rver",
  );
  return { child, port: ready.port };
}

async function writer(home: string, config: object, env: NodeJS.ProcessEnv = {}): Promise<Worker> {
  const w = await startWorker(env);
  children.push(w.process);
  await w.call("open", { home, config });
  await w.call("replicate", { home });
  return w;
}

const status = (w: Worker) => w.call<ReplicationStatus>("replicationStatus");

/** Until a tick that began after `since` shipped everything without an error. */
const caughtUp = (w: Worker, since: number) =>
  until(
    "catch-up",
    async () => {
      const s = await status(w);
      return s.lastError === null && (s.shippedThrough ?? 0) > since;
    },
    30_000,
  );

/** Rebuild the newest state the target holds into a new home; its rows. */
async function restoredRows(home: string, config: object, at?: number) {
  const settings = configSchema().parse(config);
  const target = await openTarget(targetConfig(settings, "offsite"), home);
  const into = join(mkdtempSync(join(tmpdir(), "hearth-restore-")), "home");
  return rows((await restoreIntoNewHome(target, "default", at, into, settings)).path);
}

async function session(home: string, config: object): Promise<string> {
  const store = await openStore({ home, config });
  const s = await store.sessions.create({ title: "replicated" });
  await store.close();
  return s.id;
}

describe("replication across crashes and failing targets", () => {
  it("kill -9 of the replicating process mid-shipment, then a restart: the restore equals the store", async () => {
    const home = tempHome();
    const config = replicaConfig(mkdtempSync(join(tmpdir(), "hearth-target-")), { intervalMs: 20 });
    const sessionId = await session(home, config);
    // Killed between writing a segment and renaming it into place, at its 5th to 25th object.
    const nth = 5 + Math.floor(Math.random() * 20);
    const doomed = await writer(home, config, {
      HEARTH_FAILPOINTS: `replicate.mid-put=kill@${nth}`,
    });
    void doomed
      .call("appendLoop", { sessionId, prefix: "a", content: "x".repeat(500), forever: true })
      .catch(() => {});
    const exit = await doomed.exited;
    expect(exit.signal).toBe("SIGKILL");
    const killedAt = Date.now();
    expect(doomed.acks.length).toBeGreaterThan(0);

    const again = await writer(home, config);
    await again.call("appendLoop", { sessionId, prefix: "b", count: 40 });
    await again.call("close");
    const live = rows(join(home, "state.db"));
    const ids = new Set(live.map((r) => (r as { client_id: string }).client_id));
    expect([...doomed.acks, ...again.acks].filter((id) => !ids.has(id))).toEqual([]);
    expect(await restoredRows(home, config)).toEqual(live);
    // What was shipped before the kill restores too: a prefix of the store's rows.
    const before = await restoredRows(home, config, killedAt);
    expect(before).toEqual(live.slice(0, before.length));
  });

  // Five waits on real processes in a row (a first shipment, the failure
  // seen, 200 more acks, lag past 1 s, the catch-up of a writer that never
  // stops): 46 s in all with two busy loops beside on 2 CPUs at load ~24,
  // and twice over the default 60 s there (each wait has its own deadline).
  it(
    "an S3 target that stops: lag grows, writes go on, and it catches up once back",
    {
      timeout: 180_000,
    },
    async () => {
      const home = tempHome();
      const bucketDir = mkdtempSync(join(tmpdir(), "hearth-s3-"));
      const s3 = await startS3rver(bucketDir);
      const config = {
        ...replicaConfig("/unused"),
        backup: s3Targets(s3.port),
        replicate: { target: "offsite", intervalMs: 50, snapshotIntervalMs: 60_000 },
      };
      process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.AWS_ACCESS_KEY_ID;
      process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.AWS_SECRET_ACCESS_KEY;
      const sessionId = await session(home, config);
      const w = await writer(home, config, CREDENTIALS);
      void w
        .call("appendLoop", { sessionId, prefix: "s", content: "y".repeat(300), forever: true })
        .catch(() => {});
      await w.waitForAcks(30);
      await until(
        "a first shipment",
        async () => (await status(w)).shippedThrough !== null,
        20_000,
      );

      await s3.child.kill("SIGKILL");
      const down = w.acks.length;
      await until("the failure reported", async () => (await status(w)).lastError !== null, 20_000);
      // The writer is not held up: appends go on being acknowledged while the target is down.
      await w.waitForAcks(down + 200);
      const failing = await status(w);
      expect(failing.lastError?.code).toBe("HEARTH_TARGET_FAILED");
      await until("lag past 1 s", async () => ((await status(w)).lagMs ?? 0) > 1_000, 20_000);

      const backAt = Date.now();
      await startS3rver(bucketDir, s3.port);
      await caughtUp(w, backAt);
      await w.kill("SIGKILL");
      const live = rows(join(home, "state.db"));
      const restored = await restoredRows(home, config);
      // Everything up to the last tick is there, as the store has it.
      expect(restored.length).toBeGreaterThan(down + 200);
      expect(restored).toEqual(live.slice(0, restored.length));
    },
  );

  it("a directory target that fills: lag reported, writes go on, catch-up once space is freed", async (ctx) => {
    const home = tempHome();
    const disk = join(mkdtempSync(join(tmpdir(), "hearth-disk-")), "target");
    mountSmallDisk(disk, "64m", ctx);
    // 1 MiB of WAL kept for the full target at most: past it the generation is given up.
    const config = replicaConfig(disk, {
      intervalMs: 50,
      snapshotIntervalMs: 60_000,
      maxWalBytes: 1024 * 1024,
    });
    const sessionId = await session(home, config);
    const w = await writer(home, config);
    void w
      .call("appendLoop", {
        sessionId,
        prefix: "f",
        content: "z".repeat(300),
        pauseMs: 5,
        forever: true,
      })
      .catch(() => {});
    await until("a first shipment", async () => (await status(w)).shippedThrough !== null, 20_000);
    const filler = fillDisk(disk);
    await until("the failure reported", async () => (await status(w)).lastError !== null, 20_000);
    const full = w.acks.length;
    await w.waitForAcks(full + 200);
    expect((await status(w)).lastError?.message).toMatch(/ENOSPC/);
    // The WAL outgrew maxWalBytes: the generation was given up and the WAL let go (it starts over).
    await until("a generation given up", async () => (await status(w)).abandoned > 0, 30_000);
    const walAfter = w.acks.length;
    await w.waitForAcks(walAfter + 300);
    expect(statSync(join(home, "state.db-wal")).size).toBeLessThan(2 * 1024 * 1024);
    const freedAt = Date.now();
    rmSync(filler);
    await caughtUp(w, freedAt);
    await w.kill("SIGKILL");
    const live = rows(join(home, "state.db"));
    const restored = await restoredRows(home, config);
    expect(restored.length).toBeGreaterThan(full + 200);
    expect(restored).toEqual(live.slice(0, restored.length));
  });
});

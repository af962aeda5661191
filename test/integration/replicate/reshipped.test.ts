import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica, segmentKey } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { applyRetention } from "../../../src/ops/replicate/retention.js";
import { openTarget, sha256, targetConfig } from "../../../src/ops/replicate/target.js";
import type { Store } from "../../../src/store/api.js";
import { FRAME_HEADER_BYTES } from "../../../src/store/sqlite/wal-ship/wal-file.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";

// The second segment put is taken by the target, its answer lost (issue 46).
// Read at the first hit of a failpoint, in this file's own process.
process.env.HEARTH_FAILPOINTS = "replicate.after-put=fail@2";

async function append(store: Store, sessionId: string, prefix: string, n: number) {
  for (let i = 0; i < n; i++)
    await store.messages.append(sessionId, {
      role: "user",
      content: `${prefix}${i} ${"r".repeat(300)}`,
    });
}

async function restore(store: Store, home: string, at?: number) {
  const target = await openTarget(targetConfig(store.config, "offsite"), home);
  const into = join(mkdtempSync(join(tmpdir(), "hearth-reship-")), "home");
  return restoreIntoNewHome(target, "default", at, into, store.config);
}

/** Wait until the clock is past `ms`: the next object's time is later than that one's. */
async function past(ms: number) {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, 2));
}

/** A store with a WAL that does not start over during the test. */
async function held(dir: string) {
  const home = tempHome();
  const store = await openStore({
    home,
    config: { ...replicaConfig(dir), durability: { walAutocheckpointPages: 100_000 } },
  });
  const session = await store.sessions.create({ title: "reship" });
  return { home, store, session };
}

describe("a segment shipped again from the same frame (its put's answer lost)", () => {
  it("the longer supersedes the shorter: restores to either end, retention removes the shorter", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const { home, store, session } = await held(dir);
    await append(store, session.id, "a", 20);
    const replication = await replicating(store, home);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();
    // Put 2: on the target, but the replicator hears an error and stays at its start.
    await append(store, session.id, "b", 10);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError?.code).toBe("HEARTH_TARGET_FAILED");
    const atShort = rows(store.path);
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const [first, short] = (await listReplica(target, "default")).segments;
    await past(short!.at);
    // Put 3: the same frames and the ones committed since, from the same frame.
    await append(store, session.id, "c", 10);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();
    await replication.stop();
    const expected = rows(store.path);
    expect(expected).toHaveLength(40);
    const { segments } = await listReplica(target, "default");
    expect(segments).toHaveLength(3);
    const long = segments[2]!;
    expect(segments[1]!.key).toBe(short!.key);
    expect([short!.from, long.from]).toEqual([first!.to, first!.to]);
    expect(long.to).toBeGreaterThan(short!.to);

    // The newest: the longer one applied, the shorter one skipped.
    const newest = await restore(store, home);
    expect(rows(newest.path)).toEqual(expected);
    expect(newest.segments).toBe(2);
    // Between the two: the shorter one's end, a consistent boundary.
    expect(long.at).toBeGreaterThan(short!.at);
    const between = await restore(store, home, short!.at);
    expect(rows(between.path)).toEqual(atShort);
    expect(atShort).toHaveLength(30);

    // A replicator started again continues after the longer one (the last of its generation).
    await append(store, session.id, "d", 5);
    const again = await replicating(store, home);
    await again.tick();
    expect(again.statuses()[0]!.generation).toBe(long.generation);
    await again.stop();
    const next = (await listReplica(target, "default")).segments.at(-1)!;
    expect(next.from).toBe(long.to);
    const all = rows(store.path);
    expect(all).toHaveLength(45);
    expect(rows((await restore(store, home)).path)).toEqual(all);

    // Retention: once the longer one is older than it, the shorter one goes.
    const gen = long.generation;
    const kept = await applyRetention(target, "default", gen, store.config.replicate, long.at - 1);
    expect(kept).not.toContain(short!.key);
    const doomed = await applyRetention(
      target,
      "default",
      gen,
      { ...store.config.replicate, retentionMs: 1 },
      long.at + 1,
    );
    expect(doomed).toContain(short!.key);
    expect(doomed).not.toContain(long.key);
    const after = await listReplica(target, "default");
    expect(after.segments.map((s) => s.key)).toEqual([first!.key, long.key, next.key]);
    expect(rows((await restore(store, home)).path)).toEqual(all);
    await store.close();
  });

  it("two segments from one frame of different WAL runs are refused, naming both, and both kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const { home, store, session } = await held(dir);
    const replication = await replicating(store, home);
    await append(store, session.id, "a", 10);
    await replication.tick();
    await append(store, session.id, "b", 10);
    await replication.tick();
    await replication.stop();
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const last = (await listReplica(target, "default")).segments.at(-1)!;
    // A longer twin whose frames carry other salts (another run of the WAL).
    const frames = Buffer.from(inflateRawSync(readFileSync(join(dir, ...last.key.split("/")))));
    const step = FRAME_HEADER_BYTES + readFileSync(store.path).readUInt16BE(16);
    expect(frames.length % step).toBe(0);
    for (let at = 0; at < frames.length; at += step) frames.writeUInt32BE(0xfeed, at + 8);
    const data = deflateRawSync(frames);
    const twin = segmentKey("default", {
      ...last,
      to: last.to + 1,
      at: last.at + 1,
      sha: sha256(data),
    });
    writeFileSync(join(dir, ...twin.split("/")), data);

    await expect(restore(store, home)).rejects.toMatchObject({
      code: "HEARTH_REPLICA_GAP",
      message: expect.stringContaining(last.key),
    });
    await expect(restore(store, home)).rejects.toThrow(twin);
    // Before the twin: restores.
    expect(rows((await restore(store, home, last.at)).path)).toEqual(rows(store.path));
    const doomed = await applyRetention(
      target,
      "default",
      last.generation,
      { ...store.config.replicate, retentionMs: 1 },
      last.at + 10,
    );
    expect(doomed).not.toContain(last.key);
    expect(doomed).not.toContain(twin);
    await store.close();
  });
});

import {
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica, segmentKey } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, sha256, targetConfig } from "../../../src/ops/replicate/target.js";
import { packByScan, packSegment } from "../../../src/store/sqlite/wal-ship/segment.js";
import { packFromIndex } from "../../../src/store/sqlite/wal-ship/segment-index.js";
import {
  parseWalHeader,
  type WalHeader,
  walStart,
} from "../../../src/store/sqlite/wal-ship/wal-file.js";
import { tempHome } from "../../helpers/home.js";
import { replicaConfig, replicating, rows } from "../../helpers/replica.js";

/** A store with a WAL of `appends` commits, held (no checkpoint copies or restarts it). */
async function heldWal(appends: number) {
  const home = tempHome();
  const store = await openStore({
    home,
    config: { durability: { walAutocheckpointPages: 100_000 } },
  });
  const hold = new Database(store.path, { readonly: true });
  hold.exec("BEGIN");
  hold.prepare("SELECT count(*) FROM sqlite_schema").get();
  const session = await store.sessions.create({ title: "segments" });
  for (let i = 0; i < appends; i++)
    await store.messages.append(session.id, { role: "user", content: `m${i} ${"z".repeat(700)}` });
  const wal = `${store.path}-wal`;
  const header = parseWalHeader(readFileSync(wal).subarray(0, 32)) as WalHeader;
  const close = async () => {
    hold.exec("COMMIT");
    hold.close();
    await store.close();
  };
  return { store, wal, header, close };
}

describe("WAL segments", () => {
  it("packed from the wal-index: the same bytes as reading every frame, from the start and from a commit inside", async () => {
    const { wal, header, close } = await heldWal(200);
    const start = walStart(header);
    const scanned = packByScan(wal, header, start, 64 << 20);
    const indexed = packFromIndex(wal, header, start, 64 << 20);
    expect(scanned.frames).toBeGreaterThan(1000);
    // Each page's last version only: far fewer frames than the WAL holds.
    expect(scanned.kept).toBeLessThan(scanned.frames / 10);
    expect(indexed).toBeDefined();
    expect(indexed!.sha).toBe(scanned.sha);
    expect(indexed!.to).toEqual(scanned.to);
    // From the end of the first ~100 KB (a commit's end) on.
    const first = packByScan(wal, header, start, 100_000);
    expect(first.to.frame).toBeLessThan(scanned.frames);
    const rest = packFromIndex(wal, header, first.to, 64 << 20);
    const restScanned = packByScan(wal, header, first.to, 64 << 20);
    expect(rest!.sha).toBe(restScanned.sha);
    expect(rest!.to).toEqual(scanned.to);
    await close();
  });

  it("reads every frame when the wal-index's header does not check out (torn, or another WAL's)", async () => {
    const { store, wal, header, close } = await heldWal(100);
    const start = walStart(header);
    const scanned = packByScan(wal, header, start, 64 << 20);
    // Another WAL's salts: the index is not this WAL's.
    expect(packFromIndex(wal, header, start, 64 << 20)).toBeDefined();
    expect(
      packFromIndex(wal, { ...header, salt2: header.salt2 ^ 1 }, start, 64 << 20),
    ).toBeUndefined();
    // A torn header: mxFrame an earlier commit's end in both copies, the checksum not redone.
    // Trusted, it would ship a stale end; the packer must notice and read the frames.
    const earlier = packByScan(wal, header, start, scanned.walBytes / 2).to.frame;
    expect(earlier).toBeGreaterThan(0);
    const shm = openSync(`${store.path}-shm`, "r+");
    const b = Buffer.alloc(96);
    readSync(shm, b, 0, 96, 0);
    b.writeUInt32LE(earlier, 16);
    b.writeUInt32LE(earlier, 48 + 16);
    writeSync(shm, b, 0, 96, 0);
    expect(packFromIndex(wal, header, start, 64 << 20)).toBeUndefined();
    const packed = packSegment(wal, header, start, 64 << 20);
    expect(packed.sha).toBe(scanned.sha);
    expect(packed.to).toEqual(scanned.to);
    // Put back as it was, for SQLite's own close.
    b.writeUInt32LE(scanned.to.frame, 16);
    b.writeUInt32LE(scanned.to.frame, 48 + 16);
    writeSync(shm, b, 0, 96, 0);
    await close();
  });

  it("a replica of plain .wal segments (written before packing) still restores", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const store = await openStore({ home, config: replicaConfig(dir) });
    const replication = await replicating(store, home);
    const session = await store.sessions.create({ title: "legacy" });
    for (let i = 0; i < 60; i++) {
      await store.messages.append(session.id, {
        role: "user",
        content: `m${i} ${"w".repeat(400)}`,
      });
      if (i % 7 === 0) await replication.tick();
    }
    await replication.stop();
    const expected = rows(store.path);
    await store.close();
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const { segments } = await listReplica(target, "default");
    expect(segments.length).toBeGreaterThan(3);
    // Each segment rewritten as the older format: its frames as they are, named .wal.
    for (const seg of segments) {
      expect(seg.packed).toBe(true);
      const frames = inflateRawSync(readFileSync(join(dir, ...seg.key.split("/"))));
      const plain = segmentKey("default", { ...seg, sha: sha256(frames), packed: false });
      writeFileSync(join(dir, ...plain.split("/")), frames);
      renameSync(join(dir, ...seg.key.split("/")), join(tmpdir(), `gone-${seg.sha}`));
    }
    const after = await listReplica(target, "default");
    expect(after.segments.map((s) => s.packed)).toEqual(segments.map(() => false));
    const into = join(mkdtempSync(join(tmpdir(), "hearth-legacy-")), "home");
    const restored = await restoreIntoNewHome(target, "default", undefined, into, store.config);
    expect(rows(restored.path)).toEqual(expected);
  });
});

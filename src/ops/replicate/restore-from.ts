import { readdirSync, renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { databasePath, profileDir } from "../../config/paths.js";
import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { ensurePrivateDir } from "../../files/create.js";
import { sqliteMaintenance } from "../../store/sqlite/maintenance.js";
import { verifyRestored } from "../../store/sqlite/wal-ship/hold.js";
import { segmentFrames } from "../../store/sqlite/wal-ship/segment.js";
import { applyFrames } from "../../store/sqlite/wal-ship/wal-file.js";
import { getVerified, listReplica, type Segment, type Snapshot } from "./layout.js";
import { checkSameRun, dropCorruptTwins, supersede } from "./overlap.js";
import type { Target } from "./target.js";

export interface PointInTime {
  /** The rebuilt database file. */
  path: string;
  generation: string;
  snapshotAt: number;
  /** The newest segment applied was read at this time (every write committed before it is in). */
  through: number;
  segments: number;
  /** Segments left out: a twin (same start) that does not match its checksum, the other used. */
  skipped: string[];
  counts: { sessions: number; messages: number };
}

/**
 * Rebuild `profile`'s database as it was at `at` (ms; the newest the target
 * holds when undefined) into the new file `file`: the newest snapshot taken
 * at or before `at`, then every WAL segment of its generation read at or
 * before `at`, in order, each checked against its SHA-256. The stream must
 * be unbroken (HEARTH_REPLICA_GAP otherwise). Verified: integrity_check,
 * hearth's application id, row counts.
 */
export async function buildPointInTime(
  target: Target,
  profile: string,
  at: number | undefined,
  file: string,
  config: HearthConfig,
): Promise<PointInTime> {
  const until = at ?? Number.POSITIVE_INFINITY;
  const { snapshots, segments } = await listReplica(target, profile);
  const snapshot = snapshots.filter((s) => s.at <= until).pop();
  if (!snapshot)
    throw new HearthError(
      "HEARTH_REPLICA_GAP",
      `backup target ${target.name} holds no snapshot of profile ${profile}${at === undefined ? "" : ` taken at or before ${new Date(at).toISOString()}`}`,
      {
        resource: target.where,
        hint: snapshots.length
          ? `the oldest is from ${new Date(snapshots[0]!.at).toISOString()}`
          : "is replicate.target set, and has the gateway run since?",
      },
    );
  // A half-written twin is skipped; a segment re-shipped from the same
  // frame with more (overlap.ts) supersedes its shorter twin.
  const intact = await dropCorruptTwins(
    target,
    segments.filter((s) => s.generation === snapshot.generation && s.at <= until),
  );
  const { kept, superseded } = supersede(intact.segments);
  const chain = unbroken(snapshot, kept);
  const db = await open(file, "wx", 0o600);
  try {
    const image = await getVerified(target, snapshot);
    const pageSize = pageSizeOf(image);
    for (const pair of superseded)
      if (chain.includes(pair.long)) await checkSameRun(target, pair, pageSize);
    await db.writeFile(image);
    for (const seg of chain)
      await applyFrames(db, segmentFrames(await getVerified(target, seg), seg.packed), pageSize);
    await db.sync();
  } catch (err) {
    await db.close();
    rmSync(file, { force: true });
    throw err;
  }
  await db.close();
  try {
    sqliteMaintenance.setJournalMode(
      file,
      config.durability.journalMode,
      config.durability.synchronous,
    );
    const counts = verifyRestored(file);
    return {
      path: file,
      generation: snapshot.generation,
      snapshotAt: snapshot.at,
      through: chain.at(-1)?.at ?? snapshot.at,
      segments: chain.length,
      skipped: intact.skipped,
      counts,
    };
  } catch (err) {
    rmSync(file, { force: true });
    throw new HearthError(
      "HEARTH_RESTORE_FAILED",
      `the database rebuilt from ${target.name} failed verification: ${(err as Error).message}`,
      {
        resource: target.where,
        cause: err,
        hint: "restore to another time (--at) or from another target",
      },
    );
  }
}

/**
 * The segments to apply after `snapshot`: from frame 0 of its walSeq on,
 * each walSeq whole and the next. Any other overlap than a superseded twin
 * (a segment starting inside the one before it) is refused, naming both.
 */
function unbroken(snapshot: Snapshot, segments: Segment[]): Segment[] {
  const chain: Segment[] = [];
  let walSeq = snapshot.walSeq;
  let frame = 0;
  for (const seg of segments) {
    if (seg.walSeq < snapshot.walSeq) continue;
    if (seg.walSeq === walSeq + 1 && seg.from === 0) {
      walSeq = seg.walSeq;
      frame = 0;
    }
    const before = chain.at(-1);
    if (seg.walSeq === walSeq && seg.from < frame && before)
      throw new HearthError(
        "HEARTH_REPLICA_GAP",
        `generation ${snapshot.generation} holds overlapping segments ${before.key} and ${seg.key} (expected WAL ${walSeq} frame ${frame})`,
        { resource: seg.key, hint: "restore to a time before the later of the two (--at)" },
      );
    if (seg.walSeq !== walSeq || seg.from !== frame)
      throw new HearthError(
        "HEARTH_REPLICA_GAP",
        `generation ${snapshot.generation} has a gap before ${seg.key} (expected WAL ${walSeq} frame ${frame})`,
        { resource: seg.key, hint: "restore to a time before the gap (--at)" },
      );
    chain.push(seg);
    frame = seg.to;
  }
  return chain;
}

function pageSizeOf(image: Buffer): number {
  const size = image.length >= 100 ? image.readUInt16BE(16) : 0;
  if (size !== 1 && (size < 512 || (size & (size - 1)) !== 0))
    throw new HearthError("HEARTH_REPLICA_CORRUPT", "a snapshot is not a SQLite database", {});
  return size === 1 ? 65_536 : size;
}

/**
 * Restore into a new home: `into` must be absent or empty
 * (HEARTH_DESTINATION_NOT_EMPTY otherwise; nothing is written). The
 * database is rebuilt inside the destination and renamed into place.
 */
export async function restoreIntoNewHome(
  target: Target,
  profile: string,
  at: number | undefined,
  into: string,
  config: HearthConfig,
): Promise<PointInTime> {
  let entries: string[] = [];
  try {
    entries = readdirSync(into);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (entries.length > 0)
    throw new HearthError("HEARTH_DESTINATION_NOT_EMPTY", `${into} is not empty`, {
      resource: into,
      hint: "name a new or empty directory with --into; to replace a live store, leave --into out (with --window on a running system)",
    });
  ensurePrivateDir(into);
  ensurePrivateDir(profileDir(into, profile));
  const path = databasePath(into, profile);
  const staging = join(profileDir(into, profile), `.restore-${process.pid}.tmp`);
  const result = await buildPointInTime(target, profile, at, staging, config);
  renameSync(staging, path);
  return { ...result, path };
}

import { randomBytes } from "node:crypto";
import { HearthError } from "../../errors.js";
import { sha256, type Target } from "./target.js";

/**
 * How a profile's replica is laid out on a target (litestream's model):
 *
 *     <profile>/generations/<generation>/snapshots/<walSeq>-<frame>-<ms>-<sha256>.db
 *     <profile>/generations/<generation>/wal/<walSeq>-<from>-<to>-<ms>-<sha256>.walz
 *
 * A generation is one unbroken stream of WAL: it starts with a snapshot
 * (the database file) and every committed frame after it, in segments.
 * `walSeq` counts the times the WAL started over within the generation, and
 * a segment holds frames [from, to) of that WAL. A snapshot taken while
 * frames 0..frame of WAL walSeq were shipped is the database file at that
 * time; a restore applies to it every segment of walSeq and after, in
 * order (some pages of those frames may already be in it). A `.walz`
segment holds each page's last version among those frames, deflated
(src/store/sqlite/wal-ship/segment.ts); a `.wal` one (written before
that) every frame as it was. `ms` is when the
 * object's content was read; the hex digest is its content's SHA-256,
 * checked on every read back. Objects are never changed, only added and
 * removed, so a reader needs no lock and a crash leaves no half object.
 */
export interface Snapshot {
  key: string;
  generation: string;
  walSeq: number;
  frame: number;
  at: number;
  sha: string;
}

export interface Segment {
  key: string;
  generation: string;
  walSeq: number;
  from: number;
  to: number;
  at: number;
  sha: string;
  /** A `.walz` segment: the last version of each page, deflated. */
  packed: boolean;
}

const hex8 = (n: number) => n.toString(16).padStart(8, "0");
const time = (ms: number) => String(ms).padStart(13, "0");
const GENERATION = /^\d{13}-[0-9a-f]{8}$/;
const SNAPSHOT = /^([0-9a-f]{8})-([0-9a-f]{8})-(\d{13})-([0-9a-f]{64})\.db$/;
const SEGMENT = /^([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{8})-(\d{13})-([0-9a-f]{64})\.wal(z?)$/;

export const generationsOf = (profile: string) => `${profile}/generations/`;

export function newGeneration(now = Date.now()): string {
  return `${time(now)}-${randomBytes(4).toString("hex")}`;
}

export function snapshotKey(profile: string, s: Omit<Snapshot, "key">): string {
  return `${generationsOf(profile)}${s.generation}/snapshots/${hex8(s.walSeq)}-${hex8(s.frame)}-${time(s.at)}-${s.sha}.db`;
}

export function segmentKey(profile: string, s: Omit<Segment, "key">): string {
  return `${generationsOf(profile)}${s.generation}/wal/${hex8(s.walSeq)}-${hex8(s.from)}-${hex8(s.to)}-${time(s.at)}-${s.sha}.wal${s.packed ? "z" : ""}`;
}

/** The snapshots and segments of every generation of `profile` on the target, oldest first. */
export async function listReplica(
  target: Target,
  profile: string,
): Promise<{ snapshots: Snapshot[]; segments: Segment[] }> {
  const root = generationsOf(profile);
  const snapshots: Snapshot[] = [];
  const segments: Segment[] = [];
  for (const key of await target.list(root)) {
    const [generation, kind, name] = key.slice(root.length).split("/");
    if (!generation || !GENERATION.test(generation) || !name) continue;
    const snap = kind === "snapshots" ? SNAPSHOT.exec(name) : null;
    if (snap)
      snapshots.push({
        key,
        generation,
        walSeq: Number.parseInt(snap[1]!, 16),
        frame: Number.parseInt(snap[2]!, 16),
        at: Number(snap[3]),
        sha: snap[4]!,
      });
    const seg = kind === "wal" ? SEGMENT.exec(name) : null;
    if (seg)
      segments.push({
        key,
        generation,
        walSeq: Number.parseInt(seg[1]!, 16),
        from: Number.parseInt(seg[2]!, 16),
        to: Number.parseInt(seg[3]!, 16),
        at: Number(seg[4]),
        sha: seg[5]!,
        packed: seg[6] === "z",
      });
  }
  const order = (a: { generation: string; at: number }, b: { generation: string; at: number }) =>
    a.generation.localeCompare(b.generation) || a.at - b.at;
  snapshots.sort(order);
  segments.sort(
    (a, b) =>
      a.generation.localeCompare(b.generation) ||
      a.walSeq - b.walSeq ||
      a.from - b.from ||
      a.to - b.to,
  );
  return { snapshots, segments };
}

/** An object read back whole, its SHA-256 checked against its name (HEARTH_REPLICA_CORRUPT otherwise). */
export async function getVerified(
  target: Target,
  item: { key: string; sha: string },
): Promise<Buffer> {
  const data = await target.get(item.key);
  if (sha256(data) !== item.sha)
    throw new HearthError(
      "HEARTH_REPLICA_CORRUPT",
      `${item.key} on backup target ${target.name} does not match its checksum`,
      {
        resource: item.key,
        hint: "restore to an earlier time (--at) or from another target; the replicator starts a new generation",
      },
    );
  return data;
}

import { HearthError, isHearthError } from "../../errors.js";
import { segmentFrames } from "../../store/sqlite/wal-ship/segment.js";
import { FRAME_HEADER_BYTES } from "../../store/sqlite/wal-ship/wal-file.js";
import { getVerified, type Segment } from "./layout.js";
import type { Target } from "./target.js";

/*
 * A re-shipped segment (issue 46). A put can land on the target while its
 * answer is lost (an S3 server stopped mid-reply, a directory target's
 * rename done and the process killed before it recorded the position): the
 * replicator still stands where that segment began, and its next tick
 * ships the same frames, and those committed since, as one segment from
 * the same frame. The target then holds two segments of one generation and
 * walSeq that start at the same frame: [from, to1) and [from, to2), to2 >
 * to1. Within one run of the WAL (the same salts) committed frames are
 * never rewritten, so the longer holds the shorter's frames and more: it
 * supersedes it. A restore applies whole segments, so a point inside the
 * longer one (its shorter twin's end) is reached through the shorter one
 * only; one whose time is past the longer's applies the longer one.
 */

export interface Superseded {
  short: Segment;
  long: Segment;
}

const groupKey = (s: Segment) => `${s.generation}/${s.walSeq}/${s.from}`;

/**
 * Of the segments starting at the same frame of the same generation and
 * walSeq, the one reaching furthest (the earliest of equal ones) is kept;
 * each other is superseded by it. Order kept.
 */
export function supersede(segments: Segment[]): { kept: Segment[]; superseded: Superseded[] } {
  const best = new Map<string, Segment>();
  for (const s of segments) {
    const b = best.get(groupKey(s));
    if (!b || s.to > b.to || (s.to === b.to && s.at < b.at)) best.set(groupKey(s), s);
  }
  const kept: Segment[] = [];
  const superseded: Superseded[] = [];
  for (const s of segments) {
    const long = best.get(groupKey(s))!;
    if (long === s) kept.push(s);
    else superseded.push({ short: s, long });
  }
  return { kept, superseded };
}

/**
 * Of segments starting at the same frame (twins), each read back; one that
 * does not match its checksum is left out, named in `skipped`, when an
 * intact twin reaches at least as far: a put whose object landed
 * half-written (a server stopped mid-write) was sent again as such a twin,
 * and the half one, when it could not be removed, must not stand in for
 * it. Any other segment that does not match is left in, for the restore's
 * own check to refuse (HEARTH_REPLICA_CORRUPT: nothing can replace it, and
 * a restore never silently stops short of what it was asked for).
 */
export async function dropCorruptTwins(
  target: Target,
  segments: Segment[],
): Promise<{ segments: Segment[]; skipped: string[] }> {
  const groups = new Map<string, Segment[]>();
  for (const s of segments) groups.set(groupKey(s), [...(groups.get(groupKey(s)) ?? []), s]);
  const corrupt = new Set<Segment>();
  for (const twins of groups.values()) {
    if (twins.length < 2) continue;
    for (const s of twins) {
      try {
        await getVerified(target, s);
      } catch (err) {
        if (!isHearthError(err, "HEARTH_REPLICA_CORRUPT")) throw err;
        corrupt.add(s);
      }
    }
  }
  const replaced = (s: Segment) =>
    corrupt.has(s) &&
    groups.get(groupKey(s))!.some((t) => t !== s && !corrupt.has(t) && t.to >= s.to);
  return {
    segments: segments.filter((s) => !replaced(s)),
    skipped: segments.filter(replaced).map((s) => s.key),
  };
}

/**
 * Check that a superseded segment and its longer twin come from the same
 * run of the WAL: every frame of both carries the same salts (with
 * `pageSize` unknown, the first frame of each). HEARTH_REPLICA_GAP naming
 * both objects otherwise: the replica holds two different streams from
 * one frame, and which one the database went through cannot be told.
 */
export async function checkSameRun(
  target: Target,
  pair: Superseded,
  pageSize?: number,
): Promise<void> {
  const salts = new Set<string>();
  for (const seg of [pair.short, pair.long]) {
    const frames = segmentFrames(await getVerified(target, seg), seg.packed);
    const step = pageSize ? FRAME_HEADER_BYTES + pageSize : frames.length;
    if (frames.length < FRAME_HEADER_BYTES || (pageSize && frames.length % step !== 0))
      salts.add(`unreadable ${seg.key}`);
    for (let at = 0; at + FRAME_HEADER_BYTES <= frames.length; at += step)
      salts.add(frames.subarray(at + 8, at + 16).toString("hex"));
  }
  if (salts.size !== 1)
    throw new HearthError(
      "HEARTH_REPLICA_GAP",
      `generation ${pair.long.generation} holds two different WAL streams from WAL ${pair.long.walSeq} frame ${pair.long.from}: ${pair.short.key} and ${pair.long.key} (their frames' salts differ)`,
      {
        resource: pair.long.key,
        hint: "restore to a time before the later of the two (--at), or from another target",
      },
    );
}

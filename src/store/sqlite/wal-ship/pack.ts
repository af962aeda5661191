import { createHash } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import type { WalPosition } from "./wal-file.js";

/** A packed segment (segment.ts): what the replicator puts, and what it came from. */
export interface PackedSegment {
  /** The object's bytes (deflated kept frames), empty when nothing was committed past `from`. */
  data: Buffer;
  sha: string;
  to: WalPosition;
  /** Frames read as committed, frames kept, and the WAL bytes they came from. */
  frames: number;
  kept: number;
  walBytes: number;
}

/** Packs made from the wal-index (segment-index.ts), and by reading every frame (tests look). */
export const packCounts = { indexed: 0, scanned: 0 };

/** A fast level: the volume is cut by keeping one version per page; deflate takes what is left. */
const LEVEL = 1;

/** Indexes (into `pages`, a page number per frame) of each page's last frame, in order. */
export function lastOfEachPage(pages: number[]): number[] {
  const last = new Map<number, number>();
  for (const [i, page] of pages.entries()) last.set(page, i);
  return [...last.values()].sort((a, b) => a - b);
}

/** Commit sizes zeroed but the last frame's, deflated, hashed. */
export function finish(
  out: Buffer,
  kept: number,
  frames: number,
  frameBytes: number,
  to: WalPosition,
): PackedSegment {
  for (let k = 0; k < kept - 1; k++) out.writeUInt32BE(0, k * frameBytes + 4);
  const data = deflateRawSync(out, { level: LEVEL });
  return {
    data,
    sha: createHash("sha256").update(data).digest("hex"),
    to,
    frames,
    kept,
    walBytes: frames * frameBytes,
  };
}

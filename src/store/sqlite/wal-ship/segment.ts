import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { finish, lastOfEachPage, type PackedSegment, packCounts } from "./pack.js";
import { packFromIndex } from "./segment-index.js";

import {
  FRAME_HEADER_BYTES,
  scanCommitted,
  WAL_HEADER_BYTES,
  type WalHeader,
  type WalPosition,
} from "./wal-file.js";

export { type PackedSegment, packCounts } from "./pack.js";

/*
 * A WAL segment as shipped (docs/durability.md#continuous-replication):
 * the committed frames past a position, each page's last version only,
 * deflated.
 *
 * Within a segment only its end is ever restored to (a restore applies
 * whole segments), so an earlier version of a page is dead weight: the
 * frames kept are, for each page, its last one, in WAL order. That is what
 * SQLite's own checkpoint copies (the newest frame of each page, then the
 * file cut to the last commit's size). The last frame of the segment, a
 * commit frame, is always kept, byte for byte (its header's salts and
 * checksum are what a restarted replicator compares with the WAL); every
 * other kept frame has its commit size zeroed, so a restore cuts the file
 * once, to the segment's last commit. One append commits 7-8 pages, most of
 * them the same few (the table's and the search index's last leaves, the
 * session row) from one append to the next: a tick under load ships a few
 * dozen pages instead of thousands.
 */

/**
 * Read the WAL at `walPath` past `from` (at most about `maxBytes` of frames;
 * whole transactions, at least one frame read) and pack its committed
 * frames. Synchronous: it runs on the replication thread (ship-thread.ts),
 * or inline when that thread cannot start.
 */
export function packSegment(
  walPath: string,
  header: WalHeader,
  from: WalPosition,
  maxBytes: number,
): PackedSegment {
  const fromIndex = packFromIndex(walPath, header, from, maxBytes);
  if (fromIndex) return fromIndex;
  packCounts.scanned++;
  return packByScan(walPath, header, from, maxBytes);
}

/** The scan: every frame past `from` read and its checksum checked (SQLite's recovery rule). */
export function packByScan(
  walPath: string,
  header: WalHeader,
  from: WalPosition,
  maxBytes: number,
): PackedSegment {
  const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
  const start = WAL_HEADER_BYTES + from.frame * frameBytes;
  const fd = openSync(walPath, "r");
  let buffer: Buffer;
  try {
    const size = fstatSync(fd).size;
    const wanted = Math.max(0, Math.min(size - start, Math.max(maxBytes, frameBytes)));
    buffer = Buffer.allocUnsafe(Math.floor(wanted / frameBytes) * frameBytes);
    let got = 0;
    while (got < buffer.length) {
      const n = readSync(fd, buffer, got, buffer.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    buffer = buffer.subarray(0, Math.floor(got / frameBytes) * frameBytes);
  } finally {
    closeSync(fd);
  }
  const { frames, to } = scanCommitted(buffer, header, from);
  if (frames === 0) return { data: Buffer.alloc(0), sha: "", to, frames, kept: 0, walBytes: 0 };
  const pages: number[] = [];
  for (let i = 0; i < frames; i++) pages.push(buffer.readUInt32BE(i * frameBytes));
  const keep = lastOfEachPage(pages);
  const out = Buffer.allocUnsafe(keep.length * frameBytes);
  for (const [k, i] of keep.entries())
    buffer.copy(out, k * frameBytes, i * frameBytes, (i + 1) * frameBytes);
  return finish(out, keep.length, frames, frameBytes, to);
}

/** The frames of a shipped segment: deflated ones (`packed`) inflated, older plain ones as they are. */
export function segmentFrames(data: Buffer, packed: boolean): Buffer {
  return packed ? inflateRawSync(data) : data;
}

/** The header (24 bytes) of the last frame of a segment's frames. */
export function lastFrameHeader(frames: Buffer, pageSize: number): Buffer | undefined {
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  if (frames.length < frameBytes || frames.length % frameBytes !== 0) return undefined;
  return frames.subarray(
    frames.length - frameBytes,
    frames.length - frameBytes + FRAME_HEADER_BYTES,
  );
}

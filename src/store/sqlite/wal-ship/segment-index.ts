import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { walIndexPages } from "../wal-sync/wal-index.js";
import { finish, lastOfEachPage, type PackedSegment, packCounts } from "./pack.js";
import {
  FRAME_HEADER_BYTES,
  WAL_HEADER_BYTES,
  type WalHeader,
  type WalPosition,
  walChecksum,
} from "./wal-file.js";

/**
 * Packing a segment from SQLite's wal-index (the -shm file) instead of
 * reading every frame: the index's header says how many frames are
 * committed (mxFrame, always a commit's end) and its page arrays say which
 * page each frame holds, so only each page's last frame is read. SQLite's
 * own readers trust the index the same way (they never checksum a frame
 * the index lists). Reading the whole WAL past the last position and
 * checksumming it cost ~130 µs of CPU per append (47 KB of WAL each) on the
 * bench machine; this reads 4 bytes per frame and one frame per page.
 *
 * The index is shared memory, read here without SQLite's locks, so every
 * read is checked and anything unexpected gives up (undefined: the caller
 * reads every frame instead, packByScan): the header's two copies must be
 * equal and checksum right, its salts those of the WAL header the caller
 * read, the frames past `from` fit the segment's bytes, each frame read
 * must carry the WAL's salts and the page the index gave it, and the WAL
 * header and the index must be unchanged after the reads (the WAL did not
 * start over meanwhile). Frames up to mxFrame cannot change while the
 * replicator's hold is open (hold.ts).
 */

const LE = endianness() === "LE";
/** struct WalIndexHdr: 48 bytes, twice, then WalCkptInfo (40 bytes). */
const HDR_BYTES = 48;

export function packFromIndex(
  walPath: string,
  header: WalHeader,
  from: WalPosition,
  maxBytes: number,
): PackedSegment | undefined {
  let shm: number;
  let wal: number;
  try {
    shm = openSync(`${walPath.slice(0, -4)}-shm`, "r");
  } catch {
    return undefined;
  }
  try {
    wal = openSync(walPath, "r");
  } catch {
    closeSync(shm);
    return undefined;
  }
  try {
    const before = indexHeader(shm, header);
    if (!before || before.mxFrame < from.frame) return undefined;
    const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
    const frames = before.mxFrame - from.frame;
    if (frames === 0) {
      packCounts.indexed++;
      return { data: Buffer.alloc(0), sha: "", to: from, frames: 0, kept: 0, walBytes: 0 };
    }
    const pages = walIndexPages(shm, from.frame + 1, before.mxFrame);
    if (!pages) return undefined;
    const keep = lastOfEachPage(pages);
    if (keep.length * frameBytes > Math.max(maxBytes, frameBytes)) return undefined;
    const out = Buffer.allocUnsafe(keep.length * frameBytes);
    for (const [k, i] of keep.entries()) {
      const at = WAL_HEADER_BYTES + (from.frame + i) * frameBytes;
      if (readSync(wal, out, k * frameBytes, frameBytes, at) !== frameBytes) return undefined;
      const f = k * frameBytes;
      if (
        out.readUInt32BE(f) !== pages[i] ||
        out.readUInt32BE(f + 8) !== header.salt1 ||
        out.readUInt32BE(f + 12) !== header.salt2
      )
        return undefined;
    }
    const last = out.subarray(out.length - frameBytes);
    if (last.readUInt32BE(4) === 0) return undefined; // mxFrame is a commit's end, always
    const after = indexHeader(shm, header);
    const walHead = Buffer.alloc(WAL_HEADER_BYTES);
    readSync(wal, walHead, 0, WAL_HEADER_BYTES, 0);
    if (
      !after ||
      after.mxFrame < before.mxFrame ||
      walHead.readUInt32BE(16) !== header.salt1 ||
      walHead.readUInt32BE(20) !== header.salt2
    )
      return undefined;
    const to: WalPosition = {
      ...from,
      frame: before.mxFrame,
      checksum: [last.readUInt32BE(16), last.readUInt32BE(20)],
    };
    packCounts.indexed++;
    return finish(out, keep.length, frames, frameBytes, to);
  } catch {
    return undefined;
  } finally {
    closeSync(wal);
    closeSync(shm);
  }
}

/** The index header if its two copies agree, its checksum holds, and its salts are the WAL header's. */
function indexHeader(shm: number, header: WalHeader): { mxFrame: number } | undefined {
  const b = Buffer.alloc(2 * HDR_BYTES);
  if (readSync(shm, b, 0, b.length, 0) !== b.length) return undefined;
  if (!b.subarray(0, HDR_BYTES).equals(b.subarray(HDR_BYTES))) return undefined;
  const u32 = (at: number) => (LE ? b.readUInt32LE(at) : b.readUInt32BE(at));
  if (b[12] !== 1) return undefined; // isInit
  const sum = walChecksum(b, 0, 40, [0, 0], !LE);
  if (sum[0] !== u32(40) || sum[1] !== u32(44)) return undefined;
  // aSalt is a copy of the WAL header's bytes, big-endian as there.
  if (b.readUInt32BE(32) !== header.salt1 || b.readUInt32BE(36) !== header.salt2) return undefined;
  return { mxFrame: u32(16) };
}

/** The page number of frames first..last (1-based), from the index's page arrays. */

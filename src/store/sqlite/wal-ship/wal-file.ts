import type { FileHandle } from "node:fs/promises";
import { endianness } from "node:os";

/**
 * SQLite's WAL file format (https://sqlite.org/fileformat2.html#walformat),
 * read directly from the file, never through SQLite: a 32-byte header, then
 * frames of a 24-byte header and one page. A frame belongs to the WAL when
 * its salts equal the header's and its checksum continues the running
 * checksum; a transaction is committed once a frame of it carries the
 * database size ("commit frame"). This is SQLite's own recovery rule, so
 * what is read here as committed is what SQLite would replay.
 */
export const WAL_HEADER_BYTES = 32;
export const FRAME_HEADER_BYTES = 24;
const MAGIC_LE = 0x377f0682;
const MAGIC_BE = 0x377f0683;
const LITTLE_ENDIAN_HOST = endianness() === "LE";

export interface WalHeader {
  /** Checksums are computed on big-endian words (else little-endian). */
  bigEndian: boolean;
  pageSize: number;
  /**
   * Checkpoint sequence: the count of starts over of the connection that
   * wrote the first frame, not of the database (a fresh connection writes
   * 1): it cannot tell how often the WAL started over (startedOverOnce).
   */
  checkpointSeq: number;
  salt1: number;
  salt2: number;
  /** The running checksum after the header: the first frame continues it. */
  checksum: [number, number];
}

/** Where reading stopped: the frames known committed, and the running checksum after them. */
export interface WalPosition {
  salt1: number;
  salt2: number;
  frame: number;
  checksum: [number, number];
}

/**
 * Whether the WAL whose header this is began exactly one start over after
 * the one `shipped` was read in. SQLite adds 1 to salt-1 at each start over
 * (walRestartHdr, in the shared wal-index), whichever connection does it.
 * A connection that never started a WAL over draws new salts when it writes
 * into a WAL emptied by a TRUNCATE checkpoint: that reads as "more than
 * once", a needless new generation, never a silent gap.
 */
export function startedOverOnce(shipped: WalPosition, header: WalHeader): boolean {
  return header.salt1 === (shipped.salt1 + 1) >>> 0;
}

export function parseWalHeader(b: Buffer): WalHeader | undefined {
  if (b.length < WAL_HEADER_BYTES) return undefined;
  const magic = b.readUInt32BE(0);
  if (magic !== MAGIC_LE && magic !== MAGIC_BE) return undefined;
  const bigEndian = magic === MAGIC_BE;
  const size = b.readUInt32BE(8);
  const pageSize = size === 1 ? 65_536 : size;
  if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const checksum = walChecksum(b, 0, 24, [0, 0], bigEndian);
  if (checksum[0] !== b.readUInt32BE(24) || checksum[1] !== b.readUInt32BE(28)) return undefined;
  return {
    bigEndian,
    pageSize,
    checkpointSeq: b.readUInt32BE(12),
    salt1: b.readUInt32BE(16),
    salt2: b.readUInt32BE(20),
    checksum,
  };
}

/** SQLite's WAL checksum of b[start, end) (a multiple of 8 bytes), continuing `from`. */
export function walChecksum(
  b: Buffer,
  start: number,
  end: number,
  from: [number, number],
  bigEndian: boolean,
): [number, number] {
  let [s1, s2] = from;
  if (!bigEndian && LITTLE_ENDIAN_HOST && (b.byteOffset + start) % 4 === 0) {
    // The common case (SQLite on x86 and ARM writes little-endian checksums): whole words at once.
    const words = new Uint32Array(b.buffer, b.byteOffset + start, (end - start) / 4);
    for (let i = 0; i < words.length; i += 2) {
      s1 = (s1 + words[i]! + s2) >>> 0;
      s2 = (s2 + words[i + 1]! + s1) >>> 0;
    }
    return [s1, s2];
  }
  for (let i = start; i < end; i += 8) {
    const x0 = bigEndian ? b.readUInt32BE(i) : b.readUInt32LE(i);
    const x1 = bigEndian ? b.readUInt32BE(i + 4) : b.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2];
}

/**
 * How many of the frames in `buffer` (whole frames read from the WAL past
 * `from`) are committed, and the running checksum after them: frames count
 * while their salts are the WAL's and their checksums continue the running
 * one, up to the last commit frame among them.
 */
export function scanCommitted(
  buffer: Buffer,
  header: WalHeader,
  from: WalPosition,
): { frames: number; to: WalPosition } {
  const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
  let checksum = from.checksum;
  let committed = { frames: 0, checksum };
  for (let at = 0, n = 0; at + frameBytes <= buffer.length; at += frameBytes) {
    if (buffer.readUInt32BE(at + 8) !== from.salt1 || buffer.readUInt32BE(at + 12) !== from.salt2)
      break;
    checksum = walChecksum(buffer, at, at + 8, checksum, header.bigEndian);
    checksum = walChecksum(
      buffer,
      at + FRAME_HEADER_BYTES,
      at + frameBytes,
      checksum,
      header.bigEndian,
    );
    if (
      checksum[0] !== buffer.readUInt32BE(at + 16) ||
      checksum[1] !== buffer.readUInt32BE(at + 20)
    )
      break;
    n++;
    if (buffer.readUInt32BE(at + 4) !== 0) committed = { frames: n, checksum };
  }
  return {
    frames: committed.frames,
    to: { ...from, frame: from.frame + committed.frames, checksum: committed.checksum },
  };
}

/** The position at the start of the WAL `header` heads. */
export function walStart(header: WalHeader): WalPosition {
  return { salt1: header.salt1, salt2: header.salt2, frame: 0, checksum: header.checksum };
}

/**
 * Apply shipped frames to a database image file (a restore): each frame's
 * page at its place, and at each commit frame the file cut or grown to the
 * database size it records. Frames are applied in order, so each page ends
 * at its last committed version.
 */
export async function applyFrames(db: FileHandle, frames: Buffer, pageSize: number): Promise<void> {
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  if (frames.length % frameBytes !== 0)
    throw new Error(`a WAL segment of ${frames.length} bytes is not whole frames of ${pageSize}`);
  for (let at = 0; at < frames.length; at += frameBytes) {
    const page = frames.readUInt32BE(at);
    const commitPages = frames.readUInt32BE(at + 4);
    await db.write(frames, at + FRAME_HEADER_BYTES, pageSize, (page - 1) * pageSize);
    if (commitPages !== 0) await db.truncate(commitPages * pageSize);
  }
}

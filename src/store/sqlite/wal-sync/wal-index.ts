import { readSync } from "node:fs";
import { endianness } from "node:os";

/**
 * What a writer reads of SQLite's wal-index (the -shm file) after each
 * commit: the first copy of its header and the checkpoint info after the
 * two copies, in the machine's byte order (shared memory, never on disk
 * elsewhere). Read without SQLite's locks, so a value may be one commit old
 * or torn by another process's write: hearth uses them to decide when to
 * checkpoint and where, never for durability.
 */
export interface WalIndex {
  /** mxFrame: frames in the WAL. */
  frames: number;
  /** nBackfill: frames already copied into the database by a checkpoint. */
  backfilled: number;
  /** nPage × szPage: the database's size as of the last commit. */
  dbBytes: number;
  /** szPage: bytes per page (a WAL frame is a page and a 24-byte header). */
  pageSize: number;
}

const LENGTH = 100;
const PAGE_SIZE_OFFSET = 14; // u16; 1 means 65,536
const MX_FRAME_OFFSET = 16;
const N_PAGE_OFFSET = 20;
const N_BACKFILL_OFFSET = 96;
const LE = endianness() === "LE";

export class WalIndexReader {
  private readonly buffer = Buffer.alloc(LENGTH);

  /** The wal-index behind `shmFd`, undefined when it cannot be read whole. */
  read(shmFd: number): WalIndex | undefined {
    const b = this.buffer;
    try {
      if (readSync(shmFd, b, 0, LENGTH, 0) !== LENGTH) return undefined;
    } catch {
      return undefined;
    }
    const size = LE ? b.readUInt16LE(PAGE_SIZE_OFFSET) : b.readUInt16BE(PAGE_SIZE_OFFSET);
    const pageSize = size === 1 ? 65_536 : size;
    return {
      frames: this.u32(MX_FRAME_OFFSET),
      backfilled: this.u32(N_BACKFILL_OFFSET),
      dbBytes: this.u32(N_PAGE_OFFSET) * pageSize,
      pageSize,
    };
  }

  private u32(at: number): number {
    return LE ? this.buffer.readUInt32LE(at) : this.buffer.readUInt32BE(at);
  }
}

/** struct WalIndexHdr twice, then WalCkptInfo: the first block's page numbers start after them. */
const INDEX_HEADER_BYTES = 136;
/** Page numbers per index block: 4,096, the first block's fewer by its header. */
const NPAGE = 4096;
const NPAGE_ONE = NPAGE - INDEX_HEADER_BYTES / 4;
/** A block: the page numbers then the hash table (8,192 u16 slots). */
const BLOCK_BYTES = NPAGE * 4 + NPAGE * 2 * 2;

/**
 * The page each WAL frame `first`..`last` (1-based) holds, from the
 * wal-index's page arrays behind `shm`; undefined when a read comes short
 * or finds a frame with no page (an index being rebuilt or started over).
 * Read without SQLite's locks: the caller checks what it relies on.
 */
export function walIndexPages(shm: number, first: number, last: number): number[] | undefined {
  const pages: number[] = [];
  let frame = first;
  while (frame <= last) {
    const block = frame <= NPAGE_ONE ? 0 : 1 + Math.floor((frame - NPAGE_ONE - 1) / NPAGE);
    const zero = block === 0 ? 0 : NPAGE_ONE + (block - 1) * NPAGE;
    const base = block === 0 ? INDEX_HEADER_BYTES : block * BLOCK_BYTES;
    const end = Math.min(last, zero + (block === 0 ? NPAGE_ONE : NPAGE));
    const n = end - frame + 1;
    const b = Buffer.alloc(n * 4);
    try {
      if (readSync(shm, b, 0, b.length, base + (frame - zero - 1) * 4) !== b.length)
        return undefined;
    } catch {
      return undefined;
    }
    for (let i = 0; i < n; i++) {
      const page = LE ? b.readUInt32LE(i * 4) : b.readUInt32BE(i * 4);
      if (page === 0) return undefined;
      pages.push(page);
    }
    frame = end + 1;
  }
  return pages;
}

/**
 * How many distinct database pages a checkpoint of `index` would copy now
 * (its frames past nBackfill), counted up to `limit`: `limit + 1` means
 * more, and so does a WAL past `limit` × 64 frames (not read: a backlog) or
 * an index that cannot be read. A writer's hot pages (a session's row, the
 * right edge of each index) come again and again: a lone appender's 1,000
 * frames held ~50 distinct pages. A heuristic for where the copy runs
 * (src/store/sqlite/wal-sync/checkpoints.ts), never for durability.
 */
export function pagesToCopy(shm: number, index: WalIndex, limit: number): number {
  const frames = index.frames - index.backfilled;
  if (frames <= 0) return 0;
  if (frames > limit * 64) return limit + 1;
  const pages = walIndexPages(shm, index.backfilled + 1, index.frames);
  if (!pages) return limit + 1;
  const seen = new Set<number>();
  for (const page of pages) {
    seen.add(page);
    if (seen.size > limit) return limit + 1;
  }
  return seen.size;
}

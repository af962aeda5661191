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
    const u32 = (at: number) => (LE ? b.readUInt32LE(at) : b.readUInt32BE(at));
    const size = LE ? b.readUInt16LE(PAGE_SIZE_OFFSET) : b.readUInt16BE(PAGE_SIZE_OFFSET);
    const pageSize = size === 1 ? 65_536 : size;
    return {
      frames: u32(MX_FRAME_OFFSET),
      backfilled: u32(N_BACKFILL_OFFSET),
      dbBytes: u32(N_PAGE_OFFSET) * pageSize,
      pageSize,
    };
  }
}

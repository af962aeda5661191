import { statSync } from "node:fs";
import { open } from "node:fs/promises";
import { inodeKey } from "../../../files/inspect.js";
import type { FairWriteLock } from "../../../process/write-lock.js";
import { checkpointOffLoop, checkpointThreadUp } from "../wal-sync/checkpointer.js";
import { WalHold } from "./hold.js";
import type { PackedSegment } from "./segment.js";
import { packOffLoop } from "./shipper.js";
import {
  FRAME_HEADER_BYTES,
  parseWalHeader,
  WAL_HEADER_BYTES,
  type WalHeader,
  type WalPosition,
} from "./wal-file.js";

export interface WalSourceOptions {
  path: string;
  /** The write lock of the inode (every hearth process takes it around each write transaction). */
  writeLock: FairWriteLock;
  synchronous: string;
  /** journal_size_limit: a longer WAL file is cut back by the checkpoint. */
  truncateAbove: number;
  patienceMs: number;
}

/**
 * What the replicator reads of a SQLite database, never through the
 * writer's connection: the WAL file and the database file, read directly
 * with async file reads (the libuv pool), and the hold that keeps unshipped
 * frames in the WAL (hold.ts).
 */
export class WalSource {
  readonly hold: WalHold;

  constructor(private readonly options: WalSourceOptions) {
    this.hold = new WalHold(options.path);
  }

  /** dev:ino of the database file now: a replica follows one file. */
  key(): string {
    const st = statSync(this.options.path);
    return inodeKey(st);
  }

  /** The WAL's header, undefined while the WAL is empty (or not a valid WAL yet). */
  async header(): Promise<WalHeader | undefined> {
    const file = await open(`${this.options.path}-wal`, "r").catch(() => undefined);
    if (!file) return undefined;
    try {
      const b = Buffer.alloc(WAL_HEADER_BYTES);
      const { bytesRead } = await file.read(b, 0, WAL_HEADER_BYTES, 0);
      return bytesRead === WAL_HEADER_BYTES ? parseWalHeader(b) : undefined;
    } finally {
      await file.close();
    }
  }

  /** Committed frames past `from` (at most about `maxBytes` of WAL), packed on the replication thread (segment.ts). */
  pack(header: WalHeader, from: WalPosition, maxBytes: number): Promise<PackedSegment> {
    return packOffLoop(`${this.options.path}-wal`, header, from, maxBytes);
  }

  /** The 24-byte header of WAL frame `frame` (0-based), undefined past the file's end. */
  async frameHeader(header: WalHeader, frame: number): Promise<Buffer | undefined> {
    const file = await open(`${this.options.path}-wal`, "r").catch(() => undefined);
    if (!file) return undefined;
    try {
      const b = Buffer.alloc(FRAME_HEADER_BYTES);
      const at = WAL_HEADER_BYTES + frame * (FRAME_HEADER_BYTES + header.pageSize);
      const { bytesRead } = await file.read(b, 0, FRAME_HEADER_BYTES, at);
      return bytesRead === FRAME_HEADER_BYTES ? b : undefined;
    } finally {
      await file.close();
    }
  }

  /**
   * Let the WAL start over: under the write lock (no hearth process
   * commits), `shipTail` ships what was committed since the last read, the
   * hold is let go, the checkpoint thread copies the whole WAL into the
   * database, and the hold begins again. The next commit then starts the
   * WAL over, as after SQLite's own checkpoint. The writers wait for the
   * tail's shipping and the copy of what the checkpoints beside them could
   * not copy (frames past the hold). False when the thread is not up (the
   * next tick tries again).
   */
  async restart(shipTail: () => Promise<void>): Promise<boolean> {
    if (!checkpointThreadUp()) return false;
    const { path, writeLock, synchronous, truncateAbove, patienceMs } = this.options;
    return writeLock.run(async () => {
      await shipTail();
      const key = this.key();
      this.hold.releaseAll();
      try {
        const result = await checkpointOffLoop({
          kind: "final",
          passesId: 0,
          path,
          key,
          synchronous,
          merge: 0,
          truncateAbove,
          restartFrames: Number.MAX_SAFE_INTEGER,
          readerWaitMs: 0,
        }).reply;
        return result.ok && result.busy === 0 && result.checkpointed >= result.log;
      } finally {
        this.hold.begin();
      }
    }, patienceMs);
  }

  close(): void {
    this.hold.close();
  }
}

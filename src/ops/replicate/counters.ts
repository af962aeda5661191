/** What the replicator shipped since it started (bench/workloads/replicate.mjs reads them). */
export interface ShipCounters {
  segments: number;
  /** Frames read as committed, and their bytes in the WAL. */
  frames: number;
  walBytes: number;
  /** Frames kept (each page's last version per segment), and the bytes put (deflated). */
  kept: number;
  bytes: number;
  snapshots: number;
  snapshotBytes: number;
  /** Generations continued after a start, and started anew. */
  resumed: number;
  started: number;
  /** WAL restarts let happen (source.restart), and the time they held the write lock. */
  restarts: number;
  restartLockedMs: number;
}

export function newCounters(): ShipCounters {
  return {
    segments: 0,
    frames: 0,
    walBytes: 0,
    kept: 0,
    bytes: 0,
    snapshots: 0,
    snapshotBytes: 0,
    resumed: 0,
    started: 0,
    restarts: 0,
    restartLockedMs: 0,
  };
}

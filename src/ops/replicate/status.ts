import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { profileDir } from "../../config/paths.js";
import { runDir } from "../../process/markers.js";

/** What a replicator publishes about itself, each tick: for /metrics, doctor and the dashboard. */
export interface ReplicationStatus {
  pid: number;
  profile: string;
  target: string;
  /** The generation being shipped (null: none, e.g. while the target fails before the first snapshot). */
  generation: string | null;
  walSeq: number;
  /** Every write committed before this time (ms) is on the target; null before the first ship. */
  shippedThrough: number | null;
  /** Now minus shippedThrough at the last tick (ms). */
  lagMs: number | null;
  intervalMs: number;
  /** The last tick's failure, null after a good one. */
  lastError: { code: string; message: string; since: number } | null;
  /** Generations given up because the target failed for too long (the WAL reached maxWalBytes). */
  abandoned: number;
  at: number;
}

export const statusPath = (home: string, profile: string) =>
  join(runDir(profileDir(home, profile)), "replicate.json");

/** Written whole (temporary name, rename): a reader never sees half of it. */
export function writeStatus(home: string, status: ReplicationStatus): void {
  const path = statusPath(home, status.profile);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(status)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export function readStatus(home: string, profile: string): ReplicationStatus | undefined {
  try {
    return JSON.parse(readFileSync(statusPath(home, profile), "utf8")) as ReplicationStatus;
  } catch {
    return undefined;
  }
}

/** The lag as of `now`: how long ago the newest write known shipped was committed at the latest. */
export function lagAt(status: ReplicationStatus, now = Date.now()): number | null {
  return status.shippedThrough === null ? null : Math.max(0, now - status.shippedThrough);
}

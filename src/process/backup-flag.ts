import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import fsx from "fs-native-extensions";
import { ensurePrivateDir } from "../files/create.js";
import { runDir } from "./markers.js";

/**
 * The flag an online backup raises for the writers of its profile: a shared
 * OFD lock on `run/backup.lock`, held while the copy runs, on a descriptor
 * of the backup's own. A backup reads the whole database and writes as much,
 * which is when a writer's fsync turns slow; writers that see the flag move
 * their fsync off the event loop (src/store/sqlite/wal-sync/policy.ts).
 *
 * The lock lives on a file of its own, not on the database: a descriptor
 * opened and closed on the database file would drop SQLite's POSIX locks
 * for the whole process (F2). The kernel lets go of it when the backup's
 * process dies, so a crashed backup leaves no flag up.
 */
export function backupFlagPath(profileDir: string): string {
  return join(runDir(profileDir), "backup.lock");
}

/**
 * Raise the flag; returns what lowers it. Best effort: a flag that cannot
 * be raised (a read-only run directory) costs the writers only their
 * event loop's smoothness during the copy, never a write.
 */
export async function raiseBackupFlag(profileDir: string): Promise<() => void> {
  let fd: number | undefined;
  try {
    ensurePrivateDir(runDir(profileDir));
    fd = openSync(backupFlagPath(profileDir), "a+", 0o600); // a read lock needs read access
    // A writer's probe holds the byte exclusively for a few microseconds.
    for (let tries = 0; !fsx.tryLock(fd, 0, 1, { shared: true }); tries++) {
      if (tries >= 20) throw new Error("the backup flag stayed busy");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  } catch {
    if (fd !== undefined) closeSync(fd);
    return () => {};
  }
  const held = fd;
  return () => closeSync(held); // closing the descriptor releases its OFD lock
}

/**
 * True while some process holds the flag of this profile up. One open, one
 * try-lock (and its unlock), one close: a writer asks at most once per
 * policy window. A flag file that cannot be opened means no backup ever
 * ran here (or none can be told): false.
 */
export function backupFlagRaised(profileDir: string): boolean {
  let fd: number;
  try {
    fd = openSync(backupFlagPath(profileDir), "r+");
  } catch {
    return false;
  }
  try {
    if (!fsx.tryLock(fd, 0, 1)) return true;
    fsx.unlock(fd, 0, 1);
    return false;
  } finally {
    closeSync(fd);
  }
}

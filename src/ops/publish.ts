/**
 * How every copy hearth makes of a store becomes a file (M2): written under
 * a staging name outside the backup pattern (`.staging-<profile>-<pid>-<ms>.tmp`,
 * so a half-written copy is never listed as a backup), made 0600, renamed
 * to its final name in one step and the directory fsync'd. A failure
 * removes the staging file; retention then keeps the newest copies. SQLite
 * backups, pg_dump backups and the dump before a PostgreSQL restore follow
 * it (the SQLite forensic copy of ops/forensic.ts, a folder with a manifest,
 * stages its own way).
 */
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { type FailpointName, failpoint } from "../failpoints.js";

/** The staging name of a copy this process is writing into `dir` for `profile`. */
function stagingPath(dir: string, profile: string): string {
  return join(dir, `.staging-${profile}-${process.pid}-${Date.now()}.tmp`);
}

/**
 * Run `write(staging)`, then publish the staging file as `final` (0600,
 * rename, directory fsync). `failpointName` marks the instant between the
 * finished copy and its publication for crash tests.
 */
export async function publishStaged<T>(
  dir: string,
  profile: string,
  final: string,
  write: (staging: string) => Promise<T>,
  failpointName?: FailpointName,
): Promise<T> {
  const staging = stagingPath(dir, profile);
  try {
    const value = await write(staging);
    chmodSync(staging, 0o600);
    if (failpointName) failpoint(failpointName);
    renameSync(staging, final);
    await fsyncAsync(dir);
    return value;
  } catch (err) {
    rmSync(staging, { force: true });
    throw err;
  }
}

/**
 * Keep the first `keep` of `paths` (files in `dir`, newest first), remove the
 * rest, fsync the directory when anything went. Returns the removed paths.
 */
export async function keepNewest(
  dir: string,
  paths: readonly string[],
  keep: number,
): Promise<string[]> {
  const removed = paths.slice(keep);
  for (const path of removed) rmSync(path, { force: true });
  if (removed.length > 0) await fsyncAsync(dir);
  return removed;
}

/** fsync on the thread pool: a directory's fsync can wait on the disk for tens of milliseconds. */
async function fsyncAsync(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove the staging files of this profile's copies whose process is gone
 * (killed between the copy and its publication): they are never listed as
 * backups, so nothing else would ever remove them, and each is as large as
 * the store. A staging file whose pid is in use (its copy may be running,
 * or the pid was reused) is kept: only ESRCH proves the writer is gone.
 */
export function removeDeadStaging(dir: string, profile: string): void {
  const prefix = `.staging-${profile}-`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || pidInUse(pid)) continue;
    rmSync(join(dir, name), { force: true });
  }
}

function pidInUse(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

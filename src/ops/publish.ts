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
import { basename, join } from "node:path";
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
    removeStaging(dir, basename(staging));
    throw err;
  }
}

/** What SQLite may create beside a copy it writes (a backup into a rollback-journal file leaves a hot -journal when it fails). */
const STAGING_SIDECARS = ["", "-journal", "-wal", "-shm"];

/** Remove a staging file and the sidecars SQLite may have left beside it. */
function removeStaging(dir: string, name: string): void {
  for (const suffix of STAGING_SIDECARS) rmSync(join(dir, name + suffix), { force: true });
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

/** A staging file or a sidecar of one: `.staging-<profile>-<pid>-<ms>.tmp[-journal|-wal|-shm]`. */
const STAGING_NAME = /^\.staging-(.+)-(\d+)-(\d+)\.tmp(-journal|-wal|-shm)?$/;

/**
 * The staging files (and their sidecars) in `dir`, of `profile` or of every
 * profile, whose writing process is gone: a copy that was killed or failed
 * without cleaning up. A staging file whose pid is in use (its copy may be
 * running, or the pid was reused) is not listed: only ESRCH proves the
 * writer is gone.
 */
export function deadStaging(dir: string, profile?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => {
    const match = STAGING_NAME.exec(name);
    if (!match || (profile !== undefined && match[1] !== profile)) return false;
    const pid = Number(match[2]);
    return pid > 0 && !pidInUse(pid);
  });
}

/**
 * Remove the staging files of this profile's copies whose process is gone
 * (killed between the copy and its publication, or a copy whose cleanup
 * failed), with their sidecars: they are never listed as backups, so
 * nothing else would ever remove them, and each is as large as the store.
 * Returns the removed names.
 */
export function removeDeadStaging(dir: string, profile?: string): string[] {
  const names = deadStaging(dir, profile);
  for (const name of names) rmSync(join(dir, name), { force: true });
  return names;
}

function pidInUse(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

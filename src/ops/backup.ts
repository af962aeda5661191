import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { backupsDir } from "../config/paths.js";
import { failpoint } from "../failpoints.js";
import { ensurePrivateDir } from "../files/create.js";
import { lstatOrNull } from "../files/inspect.js";
import { type Store, sqliteOnly } from "../store/api.js";
import type { OnProgress } from "../store/progress.js";
import { backupFileName, listBackups } from "./backup-names.js";
import { assertSpaceFor } from "./space.js";

export interface BackupResult {
  path: string;
  bytes: number;
  durationMs: number;
  /** Older backups removed by retention. */
  removed: string[];
  dryRun: boolean;
}

/**
 * A consistent online copy of the store: SQLite's online backup in paced
 * steps on a worker thread (the caller's event loop keeps serving), one read
 * transaction, so writers keep committing meanwhile and the copy is the
 * database as of one instant. The copy is written under a staging name
 * outside the backup pattern, fsync'd, verified (quick_check, application
 * id) on that thread, made 0600, atomically renamed to
 * `<profile>-<UTC stamp>.db` and the directory fsync'd. Then only the newest
 * `backup.keep` backups of the profile are kept. Admission is proportional
 * to the store's size and fails closed.
 */
export async function backup(
  anyStore: Store,
  options: { dryRun?: boolean; keep?: number; now?: Date; onProgress?: OnProgress } = {},
): Promise<BackupResult> {
  const store = sqliteOnly(anyStore, "an online backup (hearth backup)");
  const started = Date.now();
  const dir = backupsDir(store.home);
  const keep = options.keep ?? store.config.backup.keep;
  const size = (lstatOrNull(store.path)?.size ?? 0) + (lstatOrNull(`${store.path}-wal`)?.size ?? 0);
  const final = join(dir, backupFileName(store.profile, options.now ?? new Date()));
  if (options.dryRun) {
    ensureExists(dir);
    assertSpaceFor(dir, size, `back up ${store.path}`);
    return { path: final, bytes: size, durationMs: 0, removed: [], dryRun: true };
  }
  ensurePrivateDir(dir);
  removeDeadStaging(dir, store.profile);
  assertSpaceFor(dir, size, `back up ${store.path}`);
  const staging = join(dir, `.staging-${store.profile}-${process.pid}-${Date.now()}.tmp`);
  try {
    await store.copyTo(staging, options.onProgress);
    chmodSync(staging, 0o600);
    failpoint("backup.mid-publish");
    renameSync(staging, final);
    await fsyncAsync(dir);
  } catch (err) {
    rmSync(staging, { force: true });
    throw err;
  }
  const removed = listBackups(dir, store.profile)
    .slice(keep)
    .map((b) => {
      rmSync(b.path, { force: true });
      return b.path;
    });
  if (removed.length > 0) await fsyncAsync(dir);
  return {
    path: final,
    bytes: statSync(final).size,
    durationMs: Date.now() - started,
    removed,
    dryRun: false,
  };
}

/** fsync on the thread pool: a directory's fsync can wait on the disk for tens of milliseconds. */
export async function fsyncAsync(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Remove the staging files of this profile's backups whose process is gone
 * (killed between the copy and its publication): they are never listed as
 * backups, so nothing else would ever remove them, and each is as large as
 * the store. A staging file whose pid is in use (its backup may be running,
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

export function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function ensureExists(dir: string): void {
  if (!lstatOrNull(dir)) ensurePrivateDir(dir);
}

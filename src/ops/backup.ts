import { statSync } from "node:fs";
import { join } from "node:path";
import { backupsDir } from "../config/paths.js";
import { ensurePrivateDir } from "../files/create.js";
import { lstatOrNull } from "../files/inspect.js";
import { type Store, sqliteOnly } from "../store/api.js";
import type { OnProgress } from "../store/progress.js";
import { backupFileName, listBackups } from "./backup-names.js";
import { keepNewest, publishStaged, removeDeadStaging } from "./publish.js";
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
    // A dry run writes nothing, a missing backups/ directory included.
    assertSpaceFor(dir, size, `back up ${store.path}`);
    return { path: final, bytes: size, durationMs: 0, removed: [], dryRun: true };
  }
  ensurePrivateDir(dir);
  removeDeadStaging(dir, store.profile);
  assertSpaceFor(dir, size, `back up ${store.path}`);
  await publishStaged(
    dir,
    store.profile,
    final,
    (staging) => store.copyTo(staging, options.onProgress),
    "backup.mid-publish",
  );
  const removed = await keepNewest(
    dir,
    listBackups(dir, store.profile).map((b) => b.path),
    keep,
  );
  return {
    path: final,
    bytes: statSync(final).size,
    durationMs: Date.now() - started,
    removed,
    dryRun: false,
  };
}

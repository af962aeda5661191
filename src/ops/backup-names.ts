import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Backups are `<profile>-<UTC stamp>.db` in `$HEARTH_HOME/backups`. Anything
 * else there (staging files, forensic copies, pre-migration copies) never
 * counts as a backup.
 */
export function backupFileName(profile: string, at: Date): string {
  return `${profile}-${at.toISOString().replace(/[:.]/g, "-")}.db`;
}

const STAMP = "\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z";

export function isBackupName(profile: string, name: string): boolean {
  return new RegExp(`^${profile.replace(/[-]/g, "\\-")}-${STAMP}\\.db$`).test(name);
}

export interface BackupFile {
  path: string;
  name: string;
  size: number;
  mtimeMs: number;
}

/** A profile's backups, newest first. */
export function listBackups(dir: string, profile: string): BackupFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => isBackupName(profile, n))
    .map((name) => {
      const path = join(dir, name);
      const st = statSync(path);
      return { path, name, size: st.size, mtimeMs: st.mtimeMs };
    })
    .sort((a, b) => b.name.localeCompare(a.name));
}

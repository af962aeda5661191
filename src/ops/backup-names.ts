import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Backups are `<profile>-<UTC stamp>.db` in `$HEARTH_HOME/backups` (a
 * PostgreSQL store's: `<profile>-<UTC stamp>.pgdump`, pg_dump's custom
 * format). Anything else there (staging files, forensic copies,
 * pre-migration copies) never counts as a backup.
 */
export type BackupExt = ".db" | ".pgdump";

export function backupFileName(profile: string, at: Date, ext: BackupExt = ".db"): string {
  return `${profile}-${at.toISOString().replace(/[:.]/g, "-")}${ext}`;
}

const STAMP = "\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z";

export function isBackupName(profile: string, name: string, ext: BackupExt = ".db"): boolean {
  return new RegExp(`^${profile.replace(/[-]/g, "\\-")}-${STAMP}\\${ext}$`).test(name);
}

export interface BackupFile {
  path: string;
  name: string;
  size: number;
  mtimeMs: number;
}

/** A profile's backups, newest first. */
export function listBackups(dir: string, profile: string, ext: BackupExt = ".db"): BackupFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => isBackupName(profile, n, ext))
    .map((name) => {
      const path = join(dir, name);
      const st = statSync(path);
      return { path, name, size: st.size, mtimeMs: st.mtimeMs };
    })
    .sort((a, b) => b.name.localeCompare(a.name));
}

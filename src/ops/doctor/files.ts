import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { databasePath } from "../../config/paths.js";
import { lstatOrNull, SIDECAR_SUFFIXES } from "../../files/inspect.js";
import { listProfiles } from "../ps.js";
import type { Finding } from "./finding.js";

/** Modes, owners and types of the database, its sidecars and its directory (F1). */
export function fileFindings(path: string): Finding[] {
  const findings: Finding[] = [];
  const uid = process.getuid?.();
  for (const suffix of ["", ...SIDECAR_SUFFIXES]) {
    const file = path + suffix;
    const stats = lstatOrNull(file);
    if (!stats) continue;
    if (stats.isSymbolicLink()) {
      findings.push({
        code: "file_symlink",
        severity: "error",
        message: `${file} is a symbolic link; hearth refuses to open it`,
        fix: `move the link aside (mv ${file} ${file}.link) with every hearth process stopped`,
      });
      continue;
    }
    if (!stats.isFile()) {
      findings.push({
        code: "file_type",
        severity: "error",
        message: `${file} is not a regular file`,
        fix: `move it aside (mv ${file} ${file}.aside)`,
      });
      continue;
    }
    if (suffix === "" && stats.nlink !== 1) {
      findings.push({
        code: "file_links",
        severity: "error",
        message: `${file} has ${stats.nlink} names (hard links): a process opening another name would use another -wal and corrupt it; hearth refuses to open it`,
        fix: `find / -xdev -samefile ${file}   # then remove the other names with every hearth process stopped`,
      });
    }
    if (uid !== undefined && stats.uid !== uid) {
      findings.push({
        code: "file_owner",
        severity: "error",
        message: `${file} is owned by uid ${stats.uid}, not by this user (${uid})`,
        fix: `chown ${uid} ${file}   # as root, with every hearth process stopped`,
      });
    }
    const mode = stats.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      findings.push({
        code: "file_mode",
        severity: "warning",
        message: `${file} has mode ${mode.toString(8)}; hearth creates its files 0600`,
        fix: "hearth doctor --fix",
      });
    }
  }
  const dir = dirname(path);
  findings.push(...ghostCopyFindings(path));
  const dirStats = lstatOrNull(dir);
  if (dirStats && (dirStats.mode & 0o077) !== 0) {
    findings.push({
      code: "dir_mode",
      severity: "warning",
      message: `${dir} has mode ${(dirStats.mode & 0o777).toString(8)}; hearth keeps its directories 0700`,
      fix: "hearth doctor --fix",
    });
  }
  return findings;
}

/**
 * Copies a process kept when commits that only a removed -wal held could
 * not be put back (HEARTH_GENERATION_LOST, src/store/sqlite/ghost-wal.ts):
 * each names commits the store does not have until someone looks.
 */
function ghostCopyFindings(path: string): Finding[] {
  const prefix = `${basename(path)}.ghost-`;
  let names: string[];
  try {
    names = readdirSync(dirname(path)).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
  return names.sort().map((name) => ({
    code: "ghost_copy",
    severity: "error" as const,
    message: `${join(dirname(path), name)} holds commits that were lost from the store when its -wal was removed under a running process (HEARTH_GENERATION_LOST)`,
    fix: `compare it with the store (sqlite3 ${join(dirname(path), name)}), restore what you need (hearth restore --from FILE replaces the whole store), then move the copy out of the profile directory`,
  }));
}

/** Two profiles resolving to one database file (a symlinked profile directory) would share one store. */
export function routingFindings(home: string, profile: string, path: string): Finding[] {
  const mine = statOrNull(path);
  if (!mine) return [];
  const twins = listProfiles(home).filter((other) => {
    if (other === profile) return false;
    const st = statOrNull(databasePath(home, other));
    return st !== null && st.dev === mine.dev && st.ino === mine.ino;
  });
  if (twins.length === 0) {
    return [
      {
        code: "profile_routing",
        severity: "ok",
        message: "no other profile resolves to this database",
      },
    ];
  }
  return [
    {
      code: "profile_routing",
      severity: "error",
      message: `profiles ${[profile, ...twins].join(", ")} resolve to one database file (${path}): their sessions and deliveries would mix`,
      fix: "give each profile its own directory under $HEARTH_HOME/profiles (remove the symlink)",
    },
  ];
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

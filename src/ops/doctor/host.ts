import { statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { backupsDir, profileDir } from "../../config/paths.js";
import { lstatOrNull } from "../../files/inspect.js";
import { diskIsFull } from "../../no-space.js";
import {
  describeHolders,
  type HolderJson,
  holderJson,
  readHolders,
  settling,
} from "../../process/holders.js";
import { readMarkers } from "../../process/markers.js";
import { listBackups } from "../backup-names.js";
import { deadStaging } from "../publish.js";
import { fingerprintFile, MAX_ATTEMPTS, readLedger } from "../repair/ledger.js";
import type { Finding } from "./finding.js";

const DAY = 24 * 60 * 60 * 1000;

/**
 * Holders from the kernel (P5), processes on deleted generations, stale
 * markers. A lock no holder explains is read again first, as `hearth ps`
 * and a structural claim do (settling(): a process starting or exiting
 * holds a lock for an instant that no presence explains); one still
 * unexplained then is a warning.
 */
export async function holderFindings(
  path: string,
  home: string,
  profile: string,
): Promise<{
  findings: Finding[];
  holders: HolderJson[];
  writers: WriterLevel[];
}> {
  const findings: Finding[] = [];
  let holders: HolderJson[] = [];
  const writers: WriterLevel[] = [];
  const markers = readMarkers(profileDir(home, profile));
  try {
    const report = await settling(() => readHolders(path));
    holders = report.holders.map(holderJson);
    for (const h of report.holders.filter((h) => h.roles.includes("writer"))) {
      const marker = markers.find(
        (m) =>
          m.liveness === "alive" && m.marker?.pid === h.pid && m.marker.startTicks === h.startTicks,
      )?.marker;
      writers.push({
        pid: h.pid,
        synchronous: marker?.synchronous ?? null,
        offLoop: marker?.offLoop ?? null,
      });
    }
    findings.push({
      code: "holders",
      severity: "ok",
      message:
        report.holders.length === 0
          ? "no process holds the store"
          : `held by ${report.holders.length} process(es):\n${describeHolders(report.holders)}`,
    });
    for (const ghost of report.ghosts) {
      findings.push({
        code: "ghost_generation",
        severity: "error",
        message: `pid ${ghost.pid} (${ghost.commandLine ?? "?"}) still writes to deleted ${ghost.files.join(", ")}: its work is invisible to every other process`,
        fix: `restart pid ${ghost.pid}; never delete -wal or -shm of a store in use`,
      });
    }
    if (report.unexplainedLocks > 0) {
      findings.push({
        code: "holders_unknown",
        severity: "warning",
        message: `${report.unexplainedLocks} lock(s) on the store belong to a process hearth cannot name; structural commands will refuse`,
        fix: "run hearth doctor as root, or as the user that runs the other processes",
      });
    }
  } catch (err) {
    findings.push({
      code: "holders_unknown",
      severity: "warning",
      message: `cannot tell who holds the store: ${(err as Error).message}`,
    });
  }
  const stale = markers.filter((m) => m.liveness === "dead");
  findings.push({
    code: "stale_markers",
    severity: stale.length > 0 ? "info" : "ok",
    message: `${stale.length} marker(s) left by processes that are gone (informational, never gating)`,
    ...(stale.length > 0 ? { fix: "hearth doctor --fix" } : {}),
  });
  return { findings, holders, writers };
}

/** A live writer and the synchronous level its marker says SQLite reported to it (null: not published). */
export interface WriterLevel {
  pid: number;
  synchronous: string | null;
  /** What its commits do off the event loop, as its marker says (null: not published). */
  offLoop: string | null;
}

export function backupFindings(home: string, profile: string): Finding[] {
  const backups = listBackups(backupsDir(home), profile);
  const newest = backups[0];
  if (!newest) {
    return [
      {
        code: "backups",
        severity: "info",
        message: "no backup of this profile yet",
        fix: "hearth backup",
      },
    ];
  }
  const age = Date.now() - newest.mtimeMs;
  return [
    {
      code: "backups",
      severity: age > 7 * DAY ? "warning" : "ok",
      message: `${backups.length} backup(s); newest ${newest.name}, ${(age / DAY).toFixed(1)} day(s) old`,
      ...(age > 7 * DAY ? { fix: "hearth backup   # and schedule it" } : {}),
    },
  ];
}

/**
 * Staging files (and the -journal SQLite leaves beside one) in backups/ whose
 * copy's process is gone: a backup that was killed or failed without
 * cleaning up. Never listed as backups, each as large as a store.
 */
export function stagingFindings(home: string): Finding[] {
  const dir = backupsDir(home);
  const names = deadStaging(dir);
  if (names.length === 0) return [];
  const bytes = names.reduce((sum, n) => sum + (lstatOrNull(join(dir, n))?.size ?? 0), 0);
  return [
    {
      code: "backup_staging",
      severity: "warning",
      message: `${names.length} file(s) left in ${dir} by backups that did not finish (${(bytes / 1048576).toFixed(1)} MiB; their processes are gone, they are never listed as backups): ${names.join(", ")}`,
      fix: "hearth doctor --fix   # removes them; a backup in progress is never touched",
    },
  ];
}

/** Free space next to the store: a backup or VACUUM needs about the size of the database again. */
export function spaceFindings(path: string): Finding[] {
  const size = (lstatOrNull(path)?.size ?? 0) + (lstatOrNull(`${path}-wal`)?.size ?? 0);
  let free: number;
  try {
    const fs = statfsSync(dirname(path));
    free = fs.bavail * fs.bsize;
  } catch (err) {
    return [
      {
        code: "free_space",
        severity: "warning",
        message: `cannot read free space: ${String(err)}`,
      },
    ];
  }
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  if (diskIsFull(dirname(path))) return [diskFullFinding(path, free)];
  const low = free < 2 * size + 64 * 1048576;
  return [
    {
      code: "free_space",
      severity: low ? "warning" : "ok",
      message: `${mib(free)} free next to a ${mib(size)} store${low ? ": too little for a backup or VACUUM" : ""}`,
      ...(low ? { fix: "free disk space before running backup or optimize" } : {}),
    },
  ];
}

/**
 * The disk holding the store is full (statfs: under 1 MiB free): SQLite
 * cannot create the shared memory it reads through nor write anything.
 * Nothing is damaged, so the fix is room, never repair.
 */
export function diskFullFinding(path: string, free?: number): Finding {
  let bytes = free;
  if (bytes === undefined) {
    try {
      const fs = statfsSync(dirname(path));
      bytes = fs.bavail * fs.bsize;
    } catch {
      bytes = undefined;
    }
  }
  return {
    code: "disk_full",
    severity: "error",
    message: `the disk holding ${path} is full${bytes === undefined ? "" : ` (${bytes} bytes free)`}: the store can neither be opened nor written until space is freed; nothing is damaged`,
    fix: `free space on that filesystem (df -h ${dirname(path)}), then start hearth again; do not repair`,
  };
}

/** The repair ledger: has repair already failed on the damage this file has now? */
export function ledgerFindings(path: string, home: string, profile: string): Finding[] {
  let ledger: ReturnType<typeof readLedger>;
  try {
    ledger = readLedger(profileDir(home, profile));
  } catch (err) {
    return [
      {
        code: "repair_ledger",
        severity: "error",
        message: (err as Error).message,
        fix: (err as { hint?: string }).hint ?? "inspect the repair ledger",
      },
    ];
  }
  if (Object.keys(ledger).length === 0) {
    return [{ code: "repair_ledger", severity: "ok", message: "no repair attempts recorded" }];
  }
  let entry: (typeof ledger)[string] | undefined;
  try {
    entry = ledger[fingerprintFile(path)];
  } catch {
    entry = undefined;
  }
  if (!entry || entry.repaired) {
    return [
      {
        code: "repair_ledger",
        severity: "ok",
        message: "no failed repair on the store as it is now",
      },
    ];
  }
  const gaveUp = entry.failures >= MAX_ATTEMPTS;
  return [
    {
      code: "repair_ledger",
      severity: gaveUp ? "error" : "warning",
      message: `repair failed ${entry.failures} time(s) on the store as it is now (last: ${entry.lastError})${gaveUp ? "; it will not try again" : ""}`,
      fix: gaveUp ? "hearth restore <backup> --yes" : "hearth sessions repair",
    },
  ];
}

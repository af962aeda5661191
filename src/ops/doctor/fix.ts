import { chmodSync } from "node:fs";
import { dirname } from "node:path";
import { backupsDir, profileDir } from "../../config/paths.js";
import { isHearthError } from "../../errors.js";
import { lstatOrNull, SIDECAR_SUFFIXES } from "../../files/inspect.js";
import { sweepStaleMarkers } from "../../process/markers.js";
import { sqliteOnly } from "../../store/api.js";
import { openStore } from "../../store/open.js";
import { type DoctorReport, runDoctor } from "../doctor.js";
import { removeDeadStaging } from "../publish.js";

export interface FixAction {
  code: string;
  outcome: "fixed" | "refused" | "manual";
  detail: string;
}

export interface FixReport {
  actions: FixAction[];
  /** The diagnosis after the fixes. */
  after: DoctorReport;
}

/**
 * `hearth doctor --fix` (M1): apply only the fixes whose preconditions are
 * proven, refuse the others and say why. Permissions are tightened on files
 * this user owns; stale markers are removed only when their process is
 * provably dead; the WAL is checkpointed and truncated only through the
 * structural gate (refused, naming the holders, while another writer lives).
 * Damage is never "fixed" here: that is `hearth sessions repair`, offline.
 */
export async function runDoctorFix(options: {
  home?: string | undefined;
  profile?: string | undefined;
}): Promise<FixReport> {
  const before = await runDoctor(options);
  const actions: FixAction[] = [];
  for (const finding of before.findings) {
    if (finding.severity === "ok") continue;
    switch (finding.code) {
      case "file_mode":
      case "dir_mode":
        actions.push(tighten(before.path, finding.code));
        break;
      case "stale_markers": {
        const removed = sweepStaleMarkers(profileDir(before.home, before.profile));
        actions.push({
          code: finding.code,
          outcome: "fixed",
          detail: `removed ${removed.length} stale marker(s)`,
        });
        break;
      }
      case "wal_size":
        actions.push(await truncateWal(before));
        break;
      case "backup_staging": {
        const removed = removeDeadStaging(backupsDir(before.home));
        actions.push({
          code: finding.code,
          outcome: "fixed",
          detail: `removed ${removed.length} file(s) of unfinished backups`,
        });
        break;
      }
      case "empty_sessions":
      case "backups":
        break; // informational: the fix is a command the operator chooses to run
      default:
        actions.push({
          code: finding.code,
          outcome: "manual",
          detail: finding.fix
            ? `not fixed automatically; run: ${finding.fix}`
            : "not fixed automatically",
        });
    }
  }
  const after = await runDoctor(options);
  return { actions, after };
}

function tighten(path: string, code: string): FixAction {
  const changed: string[] = [];
  if (code === "dir_mode") {
    chmodSync(dirname(path), 0o700);
    changed.push(dirname(path));
  } else {
    for (const suffix of ["", ...SIDECAR_SUFFIXES]) {
      const stats = lstatOrNull(path + suffix);
      if (stats?.isFile() && (stats.mode & 0o077) !== 0) {
        chmodSync(path + suffix, 0o600);
        changed.push(path + suffix);
      }
    }
  }
  return { code, outcome: "fixed", detail: `tightened ${changed.join(", ")}` };
}

async function truncateWal(report: DoctorReport): Promise<FixAction> {
  try {
    const store = await openStore({
      home: report.home,
      profile: report.profile,
      role: "writer",
      create: false,
    });
    try {
      const note = await sqliteOnly(store, "a WAL truncate").withStructuralGate(
        "checkpoint and truncate the WAL of",
        (ctx) => {
          return ctx.truncateWal() === "busy"
            ? "a reader still uses the WAL; run it again when it is done"
            : undefined;
        },
      );
      return note
        ? { code: "wal_size", outcome: "refused", detail: note }
        : { code: "wal_size", outcome: "fixed", detail: "checkpointed and truncated the WAL" };
    } finally {
      await store.close();
    }
  } catch (err) {
    if (isHearthError(err)) return { code: "wal_size", outcome: "refused", detail: err.message };
    throw err;
  }
}

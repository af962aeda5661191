import { databasePath, resolveHome } from "../config/paths.js";
import { isHearthError } from "../errors.js";
import { HEARTH_APPLICATION_ID, lstatOrNull, SIDECAR_SUFFIXES } from "../files/inspect.js";
import { LATEST_SCHEMA_VERSION } from "../store/migrations.js";
import { openStore } from "../store/open.js";
import type { DurabilityReport, StoreCounts } from "../store/types.js";

export type Severity = "ok" | "info" | "warning" | "error";

export interface Finding {
  code: string;
  severity: Severity;
  message: string;
  /** The command that fixes it, when there is one. */
  fix?: string;
}

export interface DoctorReport {
  home: string;
  profile: string;
  path: string;
  findings: Finding[];
  durability?: DurabilityReport;
  counts?: StoreCounts;
  schemaVersion?: number;
  /** The worst severity among the findings. */
  status: Severity;
}

const RANK: Record<Severity, number> = { ok: 0, info: 1, warning: 2, error: 3 };

/**
 * Read-only diagnosis of one profile's store (M1): it opens the store with
 * the reader role, which never creates, migrates or writes anything.
 */
export async function runDoctor(
  options: { home?: string; profile?: string } = {},
): Promise<DoctorReport> {
  const home = resolveHome(options.home);
  const profile = options.profile ?? process.env.HEARTH_PROFILE ?? "default";
  const path = databasePath(home, profile);
  const findings: Finding[] = [];
  const report: DoctorReport = { home, profile, path, findings, status: "ok" };

  findings.push(...fileFindings(path));
  let store: Awaited<ReturnType<typeof openStore>> | undefined;
  try {
    store = await openStore({ home, profile, role: "reader" });
  } catch (err) {
    findings.push({
      code: isHearthError(err) ? err.code : "HEARTH_OPEN_FAILED",
      severity: "error",
      message: (err as Error).message,
      ...(isHearthError(err) && err.hint ? { fix: err.hint } : {}),
    });
  }
  if (store) {
    try {
      const durability = await store.durability();
      report.durability = durability;
      report.counts = await store.counts();
      findings.push(...durabilityFindings(durability));
      const schema = await store.schema();
      report.schemaVersion = schema.version;
      if (schema.applicationId !== HEARTH_APPLICATION_ID) {
        findings.push({
          code: "application_id",
          severity: "error",
          message: `application_id is ${schema.applicationId}, not hearth's`,
        });
      }
      findings.push({
        code: "schema",
        severity: "ok",
        message: `schema version ${report.schemaVersion} (this build: ${LATEST_SCHEMA_VERSION})`,
      });
      const check = await store.quickCheck();
      findings.push(
        check.ok
          ? { code: "quick_check", severity: "ok", message: "quick_check: ok" }
          : {
              code: "quick_check",
              severity: "error",
              message: `quick_check: ${check.problems.slice(0, 5).join("; ")}`,
              fix: "hearth sessions repair",
            },
      );
    } finally {
      await store.close();
    }
  }
  report.status = findings.reduce<Severity>(
    (worst, f) => (RANK[f.severity] > RANK[worst] ? f.severity : worst),
    "ok",
  );
  return report;
}

function fileFindings(path: string): Finding[] {
  const findings: Finding[] = [];
  for (const suffix of ["", ...SIDECAR_SUFFIXES]) {
    const file = path + suffix;
    const stats = lstatOrNull(file);
    if (!stats) continue;
    const mode = stats.mode & 0o777;
    if (stats.isFile() && (mode & 0o077) !== 0) {
      findings.push({
        code: "file_mode",
        severity: "warning",
        message: `${file} has mode ${mode.toString(8)}; hearth creates its files 0600`,
        fix: `chmod 600 ${file}   # with every hearth process stopped`,
      });
    }
  }
  const dir = path.slice(0, path.lastIndexOf("/"));
  const dirStats = lstatOrNull(dir);
  if (dirStats && (dirStats.mode & 0o077) !== 0) {
    findings.push({
      code: "dir_mode",
      severity: "warning",
      message: `${dir} has mode ${(dirStats.mode & 0o777).toString(8)}; hearth keeps its home 0700`,
      fix: `chmod 700 ${dir}`,
    });
  }
  return findings;
}

function durabilityFindings(d: DurabilityReport): Finding[] {
  const findings: Finding[] = [
    {
      code: "sqlite_version",
      severity: d.walResetBug ? "error" : "ok",
      message: `SQLite ${d.sqliteVersion}${d.walResetBug ? " has the WAL-reset bug" : " (past the WAL-reset bug)"}`,
    },
    {
      code: "journal_mode",
      severity: d.journalMode.actual === d.journalMode.configured ? "ok" : "warning",
      message: `journal mode: configured ${d.journalMode.configured}, actual ${d.journalMode.actual}`,
    },
    {
      code: "synchronous",
      severity: d.synchronous.actual === d.synchronous.configured ? "ok" : "warning",
      message: `synchronous: configured ${d.synchronous.configured}, actual ${d.synchronous.actual}`,
    },
    {
      code: "filesystem",
      severity: d.filesystem.walUnsafeReason && d.journalMode.actual === "wal" ? "error" : "ok",
      message: `filesystem: ${d.filesystem.fstype ?? "unknown"} (${d.filesystem.magic})${d.filesystem.walUnsafeReason ? `: ${d.filesystem.walUnsafeReason}` : ", WAL-safe"}`,
    },
  ];
  return findings;
}

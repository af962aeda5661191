import { loadConfigLazily } from "../config/load-lazily.js";
import { databasePath, resolveLocation } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { isHearthError } from "../errors.js";
import { assertOurs, lstatOrNull, readHeader } from "../files/inspect.js";
import type { HolderJson } from "../process/holders.js";
import { warmKernelLocks } from "../process/proc-locks.js";
import { fromSqliteError, isSqliteError } from "../sqlite-errors.js";
import { sqliteMaintenance } from "../store/sqlite/maintenance.js";
import type { StoreCounts } from "../store/types.js";
import type { McpProbe } from "../turn/tools/mcp/probe.js";
import { fileFindings, routingFindings } from "./doctor/files.js";
import { type Finding, type Severity, worst } from "./doctor/finding.js";
import {
  backupFindings,
  diskFullFinding,
  holderFindings,
  ledgerFindings,
  spaceFindings,
  stagingFindings,
} from "./doctor/host.js";
import { jobFindings } from "./doctor/jobs.js";
import { mcpFindings } from "./doctor/mcp.js";
import { serviceFindings } from "./doctor/services.js";
import {
  contentFindings,
  durabilityFindings,
  STALE_HANDOFF_MS,
  synchronousFinding,
} from "./doctor/store.js";
import { replicationFindings } from "./replicate/doctor.js";

export type { Finding, Severity } from "./doctor/finding.js";

export interface DoctorReport {
  home: string;
  profile: string;
  path: string;
  findings: Finding[];
  /** How the content was read: a read-only connection ("live") or an in-memory copy ("copy"). */
  snapshot?: "live" | "copy";
  counts?: StoreCounts;
  schemaVersion?: number;
  holders?: HolderJson[];
  /** The profile's MCP servers, each started, listed and stopped (when any is configured). */
  mcpServers?: McpProbe[];
  /** The worst severity among the findings. */
  status: Severity;
}

/**
 * Read-only diagnosis of one profile's store (M1). It opens no writer, takes
 * no lock that anyone waits for, and creates, deletes or writes no file: the
 * content is read through a read-only connection when the store's sidecars
 * already exist, and from an in-memory copy of the database file otherwise.
 */
export async function runDoctor(
  options: { home?: string | undefined; profile?: string | undefined } = {},
): Promise<DoctorReport> {
  warmKernelLocks(); // read last (holderFindings); its first-read cost overlaps the checks before
  const { home, profile } = resolveLocation(options);
  const path = databasePath(home, profile);
  const findings: Finding[] = [];
  const report: DoctorReport = { home, profile, path, findings, status: "ok" };
  const finish = () => {
    report.status = worst(findings);
    return report;
  };

  let config: HearthConfig;
  try {
    config = await loadConfigLazily({ home });
  } catch (err) {
    findings.push(openFailure(err, "config"));
    return finish();
  }
  const mcp = await mcpFindings(config, profile);
  findings.push(...mcp.findings);
  if (mcp.servers) report.mcpServers = mcp.servers;
  if (!lstatOrNull(path)) {
    findings.push({
      code: "store_missing",
      severity: "warning",
      message: `no store at ${path}`,
      fix: "start a hearth writer for this profile (npm start creates a demo home)",
    });
    return finish();
  }
  findings.push(...fileFindings(path));
  if (findings.some((f) => f.severity === "error")) return finish();

  let walHeader: boolean;
  try {
    const header = readHeader(path);
    assertOurs(path, header);
    walHeader = header.wal;
  } catch (err) {
    findings.push(openFailure(err, "header"));
    return finish();
  }
  findings.push(...durabilityFindings(path, walHeader, config));

  let probe = "unknown (the database could not be opened)";
  try {
    const content = sqliteMaintenance.inspectContent(path, walHeader, {
      synchronous: config.durability.synchronous,
      staleBefore: Date.now() - STALE_HANDOFF_MS,
    });
    report.snapshot = content.snapshot;
    if (content.note)
      findings.push({ code: "snapshot", severity: "warning", message: content.note });
    probe = content.synchronousProbe;
    findings.push(...contentFindings(content, path, config));
    findings.push(...(await jobFindings(content.jobs, config, profile, Date.now())));
    report.counts = content.counts;
    report.schemaVersion = content.schemaVersion;
  } catch (err) {
    findings.push(unreadable(err, path));
  }

  const held = await holderFindings(path, home, profile);
  findings.push(...held.findings);
  findings.push(synchronousFinding(config.durability.synchronous, probe, held.writers));
  report.holders = held.holders;
  findings.push(...routingFindings(home, profile, path));
  findings.push(...backupFindings(home, profile));
  findings.push(...replicationFindings(home, profile, config));
  findings.push(...stagingFindings(home));
  // A full disk was already said where the content could not be read.
  if (!findings.some((f) => f.code === "disk_full")) findings.push(...spaceFindings(path));
  findings.push(...ledgerFindings(path, home, profile));
  findings.push(...(await serviceFindings(home, profile, config)));
  return finish();
}

/** The content could not be read: on a full disk that is the disk (free space), never damage (repair). */
function unreadable(err: unknown, path: string): Finding {
  const coded = isSqliteError(err) ? fromSqliteError(err, path, "open") : err;
  if (isHearthError(coded, "HEARTH_NO_SPACE")) return diskFullFinding(path);
  return {
    code: "quick_check",
    severity: "error",
    message: `the database cannot be read: ${(err as Error).message}`,
    fix: "hearth sessions repair",
  };
}

function openFailure(err: unknown, code: string): Finding {
  return {
    code: isHearthError(err) ? err.code : code,
    severity: "error",
    message: (err as Error).message,
    ...(isHearthError(err) && err.hint ? { fix: err.hint } : {}),
  };
}

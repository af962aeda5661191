import type { HearthConfig } from "../../config/schema.js";
import { inspectFilesystem } from "../../files/fs-type.js";
import { HEARTH_APPLICATION_ID, lstatOrNull } from "../../files/inspect.js";
import { sqliteVersion } from "../../store/sqlite/durability.js";
import type { ContentReport } from "../../store/sqlite/maintenance.js";
import { LATEST_SCHEMA_VERSION } from "../../store/sqlite/migrations.js";
import { hasWalResetBug } from "../../store/sqlite/sqlite-version.js";
import type { Finding } from "./finding.js";

/** A handoff still pending or running after this long has no live owner. */
export const STALE_HANDOFF_MS = 20 * 60 * 1000;

/** Durability settings: configured versus what the file and this build actually do (C2). */
export function durabilityFindings(
  path: string,
  walHeader: boolean,
  config: HearthConfig,
): Finding[] {
  const version = sqliteVersion();
  const bug = hasWalResetBug(version);
  const fs = inspectFilesystem(path);
  const actual = walHeader ? "wal" : "rollback journal";
  const configured = config.durability.journalMode;
  return [
    {
      code: "sqlite_version",
      severity: bug ? "error" : "ok",
      message: `SQLite ${version}${bug ? " has the WAL-reset bug" : " (past the WAL-reset bug)"}`,
      ...(bug ? { fix: "upgrade hearth (it bundles its SQLite)" } : {}),
    },
    {
      code: "journal_mode",
      severity: (configured === "wal") === walHeader ? "ok" : "warning",
      message: `journal mode: configured ${configured}, the file is in ${actual} mode`,
      ...((configured === "wal") === walHeader
        ? {}
        : {
            fix: "stop every hearth process, then start one: the first writer applies the configured mode",
          }),
    },
    {
      code: "filesystem",
      severity: fs.walUnsafeReason && walHeader ? "error" : "ok",
      message: `filesystem: ${fs.fstype ?? "unknown"} (${fs.magic})${fs.walUnsafeReason ? `: ${fs.walUnsafeReason}` : ", WAL-safe"}`,
      ...(fs.walUnsafeReason && walHeader ? { fix: "move HEARTH_HOME to a local disk" } : {}),
    },
  ];
}

/**
 * `synchronous` is a property of each connection, so the truth is per
 * process: each live writer publishes the level SQLite reported back to it,
 * and doctor sets the configured level on its own connection and reads it
 * back (what a writer started now would get). Any difference is a warning.
 */
export function synchronousFinding(
  configured: string,
  probe: string,
  writers: readonly { pid: number; synchronous: string | null; offLoop?: string | null }[],
): Finding {
  const off = writers.filter((w) => w.synchronous !== null && w.synchronous !== configured);
  const live =
    writers.length === 0
      ? "no live writer"
      : `live writers: ${writers.map((w) => `pid ${w.pid} ${w.synchronous ?? "(level not published)"}${offLoopNote(w.offLoop)}`).join(", ")}`;
  // An unread probe (the store could not be opened) is no finding about the level: the reason is reported on its own.
  const unread = probe.startsWith("unknown");
  const drift = off.length > 0 || (!unread && probe !== configured);
  return {
    code: "synchronous",
    severity: drift ? "warning" : "ok",
    message: `synchronous: configured ${configured}; ${live}; a new connection reads back ${probe}`,
    ...(drift
      ? {
          fix:
            !unread && probe !== configured
              ? "this SQLite build does not take the configured level: choose another durability.synchronous"
              : `restart ${off.map((w) => `pid ${w.pid}`).join(", ")}: it runs at another level than config.json says`,
        }
      : {}),
  };
}

/** " (checkpoints off the event loop, fsync when it pays)" and the like, from a writer's marker. */
function offLoopNote(offLoop: string | null | undefined): string {
  if (offLoop === "fsync+checkpoint")
    return " (checkpoints off the event loop, fsync when it pays)";
  if (offLoop === "checkpoint") return " (checkpoints off the event loop)";
  if (offLoop === "none") return " (syncs inside the commit)";
  return "";
}

/** Findings from what the backend read of the database (through a snapshot that writes nothing). */
export function contentFindings(
  content: ContentReport,
  path: string,
  config: HearthConfig,
): Finding[] {
  const { schemaVersion, applicationId, problems, emptySessions, staleHandoffs } = content;
  return [
    {
      code: "application_id",
      severity: applicationId === HEARTH_APPLICATION_ID ? "ok" : "error",
      message:
        applicationId === HEARTH_APPLICATION_ID
          ? "application_id: hearth"
          : `application_id is ${applicationId}, not hearth's`,
    },
    {
      code: "schema",
      severity:
        schemaVersion === LATEST_SCHEMA_VERSION
          ? "ok"
          : schemaVersion < LATEST_SCHEMA_VERSION
            ? "warning"
            : "error",
      message: `schema version ${schemaVersion} (this build: ${LATEST_SCHEMA_VERSION})`,
      ...(schemaVersion < LATEST_SCHEMA_VERSION
        ? { fix: "start any hearth writer (it migrates, after a backup)" }
        : {}),
    },
    problems.length === 0
      ? { code: "quick_check", severity: "ok", message: "quick_check: ok" }
      : {
          code: "quick_check",
          severity: "error",
          message: `quick_check: ${problems.slice(0, 5).join("; ")}`,
          fix: "hearth sessions repair",
        },
    {
      code: "empty_sessions",
      severity: emptySessions > 0 ? "info" : "ok",
      message: `${emptySessions} session(s) without any message`,
      ...(emptySessions > 0 ? { fix: "hearth sessions delete-empty" } : {}),
    },
    {
      code: "stale_handoffs",
      severity: staleHandoffs > 0 ? "warning" : "ok",
      message: `${staleHandoffs} handoff(s) pending or running for more than ${STALE_HANDOFF_MS / 60000} minutes`,
      ...(staleHandoffs > 0
        ? { fix: "start the gateway: it fails stale handoffs of dead owners at start" }
        : {}),
    },
    content.searchDegraded !== null
      ? {
          code: "search_index",
          severity: "error",
          message: `the search index is marked degraded (${content.searchDegraded}): search is off, messages are still stored`,
          fix: "hearth sessions repair",
        }
      : { code: "search_index", severity: "ok", message: "search index in service" },
    content.plannerSamples > 0
      ? {
          code: "planner_samples",
          severity: "warning",
          message: `sqlite_stat4 holds ${content.plannerSamples} planner sample(s) (an ANALYZE outside hearth): SQLite prepares every indexed lookup again on each call, so reads are slower`,
          fix: "hearth sessions optimize   # keeps the statistics, drops the samples; then restart long-running hearth processes",
        }
      : { code: "planner_samples", severity: "ok", message: "no planner samples (sqlite_stat4)" },
    walSizeFinding(path, config),
  ];
}

function walSizeFinding(path: string, config: HearthConfig): Finding {
  const size = lstatOrNull(`${path}-wal`)?.size ?? 0;
  const limit = config.durability.journalSizeLimitBytes;
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return size > limit
    ? {
        code: "wal_size",
        severity: "warning",
        message: `the WAL is ${mib(size)}, over its limit of ${mib(limit)}: a long reader or a stopped process keeps it from being reset`,
        fix: "hearth doctor --fix   # checkpoints and truncates it when no other writer holds the store",
      }
    : { code: "wal_size", severity: "ok", message: `WAL ${mib(size)} (limit ${mib(limit)})` };
}

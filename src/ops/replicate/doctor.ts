import type { HearthConfig } from "../../config/schema.js";
import type { Finding } from "../doctor/finding.js";
import { lagAt, readStatus } from "./status.js";

/** A replica lagging more than this many intervals (and at least 10 s) is a warning. */
const LAG_INTERVALS = 10;
const LAG_MIN_MS = 10_000;

/**
 * Replication as doctor sees it (docs/operations.md#copies-off-the-host):
 * nothing when replicate.target is unset; else the status the replicator
 * (the gateway) publishes each tick in run/replicate.json: the lag, the
 * last failure, and whether it still runs (a status older than its lag
 * bound means no replicator ships: the gateway is down, or stuck).
 */
export function replicationFindings(
  home: string,
  profile: string,
  config: HearthConfig,
  now = Date.now(),
): Finding[] {
  const { target, intervalMs } = config.replicate;
  if (target === undefined) return [];
  if (!config.backup.targets.some((t) => t.name === target))
    return [
      {
        code: "replication",
        severity: "error",
        message: `replicate.target names ${JSON.stringify(target)}, which no entry of backup.targets has (HEARTH_TARGET_UNKNOWN)`,
        fix: "add the target to backup.targets or correct replicate.target in config.json",
      },
    ];
  const bound = Math.max(LAG_INTERVALS * intervalMs, LAG_MIN_MS);
  const status = readStatus(home, profile);
  if (!status)
    return [
      {
        code: "replication",
        severity: "warning",
        message: `replication to ${target} is configured, but no replicator has reported (it runs in the gateway)`,
        fix: "hearth start (or hearth gateway run)",
      },
    ];
  const lag = lagAt(status, now);
  const lagText = lag === null ? "nothing shipped yet" : `lag ${(lag / 1000).toFixed(1)} s`;
  if (now - status.at > bound)
    return [
      {
        code: "replication",
        severity: "warning",
        message: `no replicator has reported for ${Math.round((now - status.at) / 1000)} s (pid ${status.pid} last); ${lagText}`,
        fix: "hearth start (or hearth gateway run): the gateway replicates",
      },
    ];
  if (status.lastError)
    return [
      {
        code: "replication",
        severity: "warning",
        message: `replication to ${target} fails since ${new Date(status.lastError.since).toISOString()} (${status.lastError.code}: ${status.lastError.message}); ${lagText}${status.abandoned ? `; ${status.abandoned} generation(s) given up` : ""}`,
        fix: "check the target (reachable, writable, space); the replicator catches up by itself",
      },
    ];
  return [
    {
      code: "replication",
      severity: lag !== null && lag > bound ? "warning" : "ok",
      message: `replicating to ${target}: ${lagText} (replicate.intervalMs ${intervalMs}), generation ${status.generation ?? "none"}`,
    },
  ];
}

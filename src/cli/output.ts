import { HearthError, isHearthError } from "../errors.js";
import { toHearthError } from "../sqlite-errors.js";
import { printable } from "./printable.js";

/** Exit codes: a documented contract (docs/cli.md). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  refused: 3,
  problems: 4,
  /** hearth status: a supervised child is not running or not ready. */
  notReady: 5,
  /** hearth status, restart, stop, logs: no hearth start runs on the home. */
  notRunning: 6,
  config: 78,
} as const;

/**
 * Refusals a long-lived process (gateway, scheduler, hearth start) meets at
 * startup that a restart cannot fix: it exits 78 (EX_CONFIG) so supervisors
 * (hearth start, systemd's RestartPreventExitStatus=78) do not loop on it.
 */
// Not HEARTH_MAINTENANCE_RUNNING: maintenance ends, and a restart with
// backoff then succeeds; exiting 78 would leave the process down for good.
// HEARTH_NO_SPACE is: a disk full at startup needs someone to free space,
// and restarts meanwhile only fill the log (docs/operations.md, full disk).
const UNFIXABLE_BY_RESTART = new Set([
  "HEARTH_EXPOSED_WITHOUT_AUTH",
  "HEARTH_EXPOSED_WITHOUT_TLS",
  "HEARTH_CONFIG_UNSAFE",
  "HEARTH_TOOL_MODULE_UNSAFE",
  "HEARTH_PASSWORD_FILE_UNSAFE",
  "HEARTH_PATH_HARDLINK",
  "HEARTH_GENERATION_LOST",
  "HEARTH_PORT_IN_USE",
  "HEARTH_SCHEMA_TOO_NEW",
  "HEARTH_CONFIG_INVALID",
  "HEARTH_CONFIG_UNREADABLE",
  "HEARTH_TARGET_UNKNOWN",
  "HEARTH_PROFILE_INVALID",
  "HEARTH_WAL_UNSAFE_FS",
  "HEARTH_WAL_UNSAFE_SQLITE",
  "HEARTH_GATEWAY_RUNNING",
  "HEARTH_SCHEDULER_RUNNING",
  "HEARTH_START_RUNNING",
  "HEARTH_PATH_SYMLINK",
  "HEARTH_PATH_NOT_REGULAR",
  "HEARTH_PATH_FOREIGN_OWNER",
  "HEARTH_PATH_UNSAFE_HOME",
  "HEARTH_READ_ONLY_FS",
  "HEARTH_NOT_SQLITE",
  "HEARTH_FOREIGN_DATABASE",
  "HEARTH_CHILD_REFUSED",
  "HEARTH_NO_SPACE",
]);

/** Report a long-lived process's startup error; 78 when a restart cannot fix it, else what reportError says. */
export function reportStartupError(err: unknown, options: OutputOptions): number {
  const code = reportError(err, options);
  return isHearthError(err) && UNFIXABLE_BY_RESTART.has(err.code) ? EXIT.config : code;
}

export interface OutputOptions {
  json: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

const REFUSAL_CODES = new Set([
  "HEARTH_STORE_HELD",
  "HEARTH_HOLDERS_UNKNOWN",
  "HEARTH_MAINTENANCE_RUNNING",
  "HEARTH_GATEWAY_RUNNING",
  "HEARTH_BUSY",
  "HEARTH_JOB_RUNNING",
  "HEARTH_IMPORT_SOURCE_BUSY",
  "HEARTH_DESTINATION_NOT_EMPTY",
]);

/** Print an error (text or JSON on stderr) and return the exit code it deserves. */
export function reportError(err: unknown, options: OutputOptions): number {
  // API misuse (TypeError, RangeError naming the option) is a usage error; anything else unexpected is HEARTH_INTERNAL.
  const error =
    !isHearthError(err) && (err instanceof TypeError || err instanceof RangeError)
      ? new HearthError("HEARTH_USAGE", err.message, { cause: err })
      : toHearthError(err);
  if (options.json) {
    process.stderr.write(`${JSON.stringify({ error: error.toJSON() }, null, 2)}\n`);
  } else {
    // Messages name other processes (their command lines) and files: escape what would drive the terminal.
    process.stderr.write(`Error: ${printable(error.message)}\n`);
    if (error.hint) process.stderr.write(`Try: ${printable(error.hint)}\n`);
  }
  if (isHearthError(err) && REFUSAL_CODES.has(err.code)) return EXIT.refused;
  if (error.code === "HEARTH_USAGE" || error.code === "HEARTH_PROFILE_INVALID") return EXIT.usage;
  if (error.code === "HEARTH_SUPERVISOR_NOT_RUNNING") return EXIT.notRunning;
  return EXIT.error;
}

/**
 * Every error hearth raises on purpose is a HearthError with a stable code.
 * Codes are a public contract: never renamed, never reused. docs/errors.md
 * lists each with its cause and the way out.
 */

export const ERROR_CODES = {
  // files (F1–F3)
  HEARTH_PATH_SYMLINK: "a database or sidecar path is a symbolic link",
  HEARTH_PATH_NOT_REGULAR: "a database or sidecar path is not a regular file",
  HEARTH_PATH_FOREIGN_OWNER: "a database or sidecar file is owned by another user",
  HEARTH_PATH_HARDLINK:
    "the database file has more than one name (a hard link), which SQLite cannot share safely",
  HEARTH_PATH_UNSAFE_HOME: "the home directory is unsafe (symlink, not a directory, or foreign)",
  HEARTH_NOT_SQLITE: "the file is not a SQLite database",
  HEARTH_FOREIGN_DATABASE: "the file is a SQLite database that hearth did not create",
  HEARTH_SCHEMA_TOO_NEW: "the database was written by a newer hearth",
  HEARTH_GENERATION_CHANGED: "the -wal or -shm this process uses was unlinked or replaced",
  HEARTH_PORT_IN_USE: "a server cannot listen: its port is taken by another process",
  HEARTH_GENERATION_LOST:
    "commits that only a removed -wal held could not be put back into the database; a copy was kept",
  // durability (C2)
  HEARTH_WAL_UNSAFE_FS: "WAL requested on a filesystem that cannot share memory safely",
  HEARTH_WAL_UNSAFE_SQLITE: "WAL requested on a SQLite build with the WAL-reset bug",
  // store
  HEARTH_STORE_NOT_FOUND: "a reader asked for a store that does not exist",
  HEARTH_SCHEMA_OUTDATED:
    "a reader found a schema older than this build; a writer must migrate it first",
  HEARTH_STORE_CLOSED: "the store was closed",
  HEARTH_READ_ONLY: "a write was attempted through a read-only store",
  HEARTH_READ_ONLY_FS: "the filesystem holding the store is mounted read-only",
  HEARTH_STORE_HELD: "a structural change was refused because other processes hold the store",
  HEARTH_HOLDERS_UNKNOWN: "the holders of the store could not be determined",
  HEARTH_MAINTENANCE_RUNNING:
    "a writer waited for a structural operation (maintenance) longer than store.gateWaitMs",
  HEARTH_GATEWAY_RUNNING: "another gateway already serves this profile",
  HEARTH_SESSION_NOT_FOUND: "no session has that id",
  HEARTH_TITLE_TAKEN: "another visible session already has that title",
  HEARTH_ORDINAL_OUT_OF_RANGE: "the ordinal does not exist in the live transcript",
  HEARTH_CONFLICT:
    "a compare-and-set edit found the transcript changed since the caller read it; nothing was changed",
  HEARTH_IDEMPOTENCY_CONFLICT:
    "a clientId or idempotency key was reused with different content; nothing was changed",
  HEARTH_SESSION_EXISTS: "a session with that id already exists",
  HEARTH_UNKNOWN_PARENT: "the parentId names no existing session",
  HEARTH_ABORTED: "the caller's AbortSignal ended the call before it wrote anything",
  HEARTH_SEARCH_DEGRADED:
    "the full-text index is damaged; search is unavailable until repair, writes go on",
  HEARTH_BUSY: "the database stayed locked by another process for longer than the busy timeout",
  HEARTH_SQLITE: "SQLite reported an error",
  HEARTH_SYNC_FAILED:
    "a write committed but the fsync that makes it durable failed; it may not survive a power loss",
  // maintenance
  HEARTH_NO_SPACE:
    "a disk is full: a write was not stored, a store cannot be opened, or a copy has no room (details.situation says which)",
  HEARTH_BACKUP_INVALID:
    "a backup failed verification (quick_check, application id) or is not a hearth store",
  HEARTH_RESTORE_FAILED: "a restore could not complete; the store was left as it was",
  HEARTH_REPAIR_FAILED:
    "no repair strategy produced a healthy store; the original was left as it was",
  HEARTH_REPAIR_GAVE_UP:
    "repair already failed 3 times on this exact damage and will not try again",
  HEARTH_REPAIR_LEDGER_UNREADABLE:
    "the repair ledger exists but cannot be read or trusted, so the attempt budget is unknown",
  // gateway
  HEARTH_RESPONDER_FAILED:
    "the agent turn's responder (echo or an OpenAI-compatible endpoint) failed",
  HEARTH_DELIVERY_FAILED:
    "a handoff delivery failed (no adapter, a non-2xx answer, a timeout, the gateway stopping)",
  HEARTH_TURN_BUSY: "another turn holds this session's lease",
  HEARTH_TURN_INTERRUPTED:
    "the session's lease is held by a turn a crash interrupted (internal: the new turn finishes it first)",
  HEARTH_CHAT_MOVED:
    "the chat's open session is no longer the one a process remembered (internal: the turn looks the chat up again)",
  HEARTH_TURN_CANCELLED:
    "the turn was cancelled (client disconnect, session/cancel, shutdown) and recorded as cancelled",
  HEARTH_PERMISSION_NOT_FOUND: "no tool call of that session asked for permission",
  HEARTH_PERMISSION_SETTLED:
    "a tool call's permission request was already decided (answered, expired or cancelled)",
  HEARTH_BAD_REQUEST: "an HTTP request was malformed or failed validation",
  HEARTH_NOT_FOUND: "no such route",
  HEARTH_BODY_TOO_LARGE: "the HTTP request body is larger than gateway.bodyLimitBytes",
  HEARTH_UNAUTHORIZED:
    "a pairing code, access token or refresh token is unknown, used, expired or revoked",
  HEARTH_SCOPE_DENIED:
    "a token or dashboard login asked for something its scope (read, chat, admin) does not cover",
  HEARTH_PROFILE_DENIED:
    "a token or dashboard login of one profile asked for another profile's data",
  HEARTH_INTERNAL: "an unexpected error inside hearth (a bug); the message says what failed",
  HEARTH_HOST_NOT_ALLOWED:
    "an HTTP request named a Host or came from an Origin this server does not answer for (DNS rebinding, another site's page)",
  // dashboard
  HEARTH_CSRF_REJECTED:
    "a dashboard change came without its CSRF token or from a page of another origin; nothing was written",
  HEARTH_EXPOSED_WITHOUT_TLS:
    "the dashboard was asked to listen beyond loopback without dashboard.tls",
  // scheduler and hearth start
  HEARTH_SCHEDULER_RUNNING: "another scheduler already runs the jobs of this profile",
  HEARTH_START_RUNNING: "another hearth start already supervises this home",
  HEARTH_JOB_NOT_FOUND: "no scheduled job has that name",
  HEARTH_JOB_EXISTS: "a scheduled job with that name already exists",
  HEARTH_JOB_RUNNING: "an earlier run of the job may still be alive, so a new one was not started",
  HEARTH_WORKER_ABANDONED:
    "a worker's launcher went away before letting it start; nothing was done",
  HEARTH_CHILD_REFUSED:
    "a process hearth start supervises exited 78: a refusal a restart cannot fix, so it was not restarted",
  HEARTH_SUPERVISOR_NOT_RUNNING:
    "hearth status, restart, stop or logs found no running hearth start on the home",
  HEARTH_SUPERVISOR_LOST:
    "hearth start's control connection broke mid-request (it died or was killed)",
  HEARTH_CONTROL_SOCKET_UNSAFE:
    "the control socket of hearth start is not one this user may trust (owner, mode, type)",
  HEARTH_CHILD_UNREACHABLE: "a supervised child did not answer its /v1/ready",
  HEARTH_CHILD_EXITED: "a child hearth restart started again exited before it served",
  HEARTH_UNIT_EXISTS: "hearth service install found a different systemd unit where it would write",
  HEARTH_RATE_LIMITED: "too many pairing or refresh attempts from one address",
  HEARTH_REQUEST_TIMEOUT:
    "an HTTP request's headers and body did not arrive within gateway.requestTimeoutMs",
  HEARTH_HEADERS_TOO_LARGE: "an HTTP request's headers (or URL) are larger than the server accepts",
  HEARTH_URL_TOO_LONG: "a path segment of an HTTP request is longer than any id hearth issues",
  HEARTH_EXPOSED_WITHOUT_AUTH:
    "the gateway was asked to listen beyond loopback without gateway.requireAuth",
  HEARTH_DRAINING:
    "the process is shutting down (a readiness reason): it finishes what it holds and takes nothing new",
  HEARTH_GATEWAY_UNREACHABLE:
    "the dashboard's chat found no running gateway for the profile, or could not reach it",
  // postgresql backend
  HEARTH_STORE_URL_INVALID:
    "store.url (or HEARTH_STORE_URL) is not a postgres:// URL hearth can use",
  HEARTH_PG_UNAVAILABLE:
    "the PostgreSQL server could not be reached, refused the connection, or shut down",
  HEARTH_PG_TOO_MANY_CONNECTIONS:
    "the PostgreSQL server refused a new connection: its max_connections (or the role's or database's connection limit) is reached",
  HEARTH_PG_AUTH: "the PostgreSQL server rejected the user or password in store.url",
  HEARTH_PASSWORD_FILE_UNSAFE:
    "store.passwordFile is missing, not a regular file, not this user's, or open to group or others",
  HEARTH_PG_DRIVER_MISSING:
    "a PostgreSQL store was asked for but the pg driver is not installed (hearth-store lists it as an optional peer)",
  HEARTH_POSTGRES: "PostgreSQL reported an error",
  HEARTH_TARGET_NOT_EMPTY:
    "hearth migrate --to found rows in the target that are not a resumable copy of this source (or an existing file)",
  HEARTH_VALUE_UNREPRESENTABLE:
    "a source row holds a value the target cannot store (text containing NUL for PostgreSQL); nothing was copied",
  HEARTH_MIGRATE_MISMATCH:
    "a copy's verification failed: row counts or content hashes differ between source and target",
  HEARTH_MIGRATION_INCOMPLETE:
    "a PostgreSQL database holds an interrupted hearth migrate --to copy; it is not written into until the copy finishes",
  HEARTH_PG_TOOL_MISSING:
    "pg_dump or pg_restore (PostgreSQL's client tools) is not in PATH, so a PostgreSQL backup or restore cannot run",
  HEARTH_TARGET_UNKNOWN:
    "no entry of backup.targets has the name given (replicate.target, --from, --to)",
  HEARTH_TARGET_FAILED:
    "a backup target could not be written, read or listed (unreachable, full, read-only, no credentials)",
  HEARTH_REPLICA_CORRUPT: "an object on a backup target does not match the checksum in its name",
  HEARTH_REPLICA_GAP:
    "a replica's WAL stream has a gap (or a restore found none covering the time asked for)",
  HEARTH_DESTINATION_NOT_EMPTY: "hearth restore --into names a directory that is not empty",
  HEARTH_UNSUPPORTED_BACKEND:
    "a file-level operation (structural gate, online copy, maintenance window) was asked of a PostgreSQL store",
  // hearth import
  HEARTH_IMPORT_SOURCE_INVALID:
    "an import source is missing, not what the command reads (a SQLite state.db, an OpenClaw state dir), truncated or corrupt; nothing was imported",
  HEARTH_IMPORT_SCHEMA_UNSUPPORTED:
    "an import source's schema version is one this hearth does not read (newer or older than the versions handled); nothing was imported",
  HEARTH_IMPORT_SOURCE_BUSY:
    "an import source stayed locked by its writer, or changed while it was copied; nothing was imported",
  HEARTH_IMPORT_UNSAFE_FS:
    "an import source is on a network filesystem, where no consistent snapshot can be trusted; nothing was imported",
  HEARTH_IMPORT_MISMATCH:
    "an import's verification found a session whose message count or content hash differs between the source and hearth",
  // library API
  HEARTH_INVALID_ARG:
    "an argument to a store method has the wrong type or is out of range (a TypeError or RangeError carries this code)",
  // config
  HEARTH_CONFIG_INVALID: "the configuration has an unknown key or a bad value",
  HEARTH_CONFIG_UNREADABLE: "the configuration file could not be read or parsed",
  HEARTH_CONFIG_UNSAFE:
    "the configuration file is owned by another user or writable by group or others",
  HEARTH_PROFILE_INVALID: "the profile name is not allowed",
  HEARTH_TOOL_MODULE_UNSAFE:
    "a tools.modules file (or its real file, or a directory above it) is owned by another user or writable by group or others",
  // cli
  HEARTH_USAGE: "the command line is malformed",
  HEARTH_OUTPUT_UNWRITABLE:
    "an output file could not be created: it exists, is a symbolic link, or its directory is missing or not writable",
} as const;

export type HearthErrorCode = keyof typeof ERROR_CODES;

export interface HearthErrorOptions {
  /** The file, session or setting the error is about. */
  resource?: string;
  /** A runnable next step for the person reading the error. */
  hint?: string;
  cause?: unknown;
  /** Extra structured facts (holders, allowed values, ...) for --json and HTTP. */
  details?: Record<string, unknown>;
}

/**
 * The brand every HearthError carries. A registered symbol, so errors are
 * recognised across two copies of the package in one process (a library
 * and an app that both depend on hearth), where `instanceof` would fail.
 */
const BRAND: unique symbol = Symbol.for("hearth.error");

export class HearthError extends Error {
  override readonly name = "HearthError";
  /** @internal */
  readonly [BRAND] = true;

  /** `err instanceof HearthError` holds for a HearthError from any copy of hearth. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === "object" &&
      value !== null &&
      (value as { [BRAND]?: unknown })[BRAND] === true
    );
  }

  readonly code: HearthErrorCode;
  readonly resource: string | undefined;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: HearthErrorCode, message: string, options: HearthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.resource = options.resource;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** The SQLite extended result code of the cause, when there is one. */
  get sqliteCode(): string | undefined {
    const cause = this.cause as { code?: unknown } | undefined;
    return typeof cause?.code === "string" && cause.code.startsWith("SQLITE_")
      ? cause.code
      : undefined;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      ...(this.resource === undefined ? {} : { resource: this.resource }),
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      ...(this.details === undefined ? {} : { details: this.details }),
      ...(this.sqliteCode === undefined ? {} : { sqliteCode: this.sqliteCode }),
    };
  }
}

/** True for a HearthError from any copy of hearth (branded, not `instanceof` alone), optionally of one code. */
export function isHearthError(err: unknown, code?: HearthErrorCode): err is HearthError {
  return (
    typeof err === "object" &&
    err !== null &&
    (err as { [BRAND]?: unknown })[BRAND] === true &&
    (code === undefined || (err as HearthError).code === code)
  );
}

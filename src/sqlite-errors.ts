/**
 * The one error policy for thrown values: SQLite's errors (through the
 * driver) become HEARTH_BUSY, HEARTH_NO_SPACE or HEARTH_SQLITE with the
 * extended code kept as the cause; anything not coded is HEARTH_INTERNAL.
 */
import { dirname, isAbsolute } from "node:path";
import { HearthError, isHearthError } from "./errors.js";
import { diskIsFull, noSpaceError } from "./no-space.js";

/**
 * Any thrown value as a HearthError: HearthErrors pass through, SQLite's
 * errors keep their extended code (HEARTH_BUSY or HEARTH_SQLITE), and
 * anything else is HEARTH_INTERNAL (a bug), never mislabelled as SQLite's.
 */
export function toHearthError(err: unknown, resource?: string): HearthError {
  if (isHearthError(err)) return err;
  if (isSqliteError(err)) return fromSqliteError(err, resource ?? "the store");
  const message = err instanceof Error ? err.message : String(err);
  return new HearthError("HEARTH_INTERNAL", `internal error: ${message}`, {
    cause: err,
    ...(resource === undefined ? {} : { resource }),
    hint: "this is a bug in hearth: report it with the message and what you ran",
  });
}

/**
 * Wrap a driver error so callers see a coded HearthError and keep SQLite's
 * extended code as the cause. HearthErrors pass through unchanged. A full
 * disk (SQLITE_FULL, or an I/O error while the disk of `resource` has no
 * room left) is HEARTH_NO_SPACE for the `situation`: a write, or opening.
 */
export function fromSqliteError(
  err: unknown,
  resource: string,
  situation: "write" | "open" = "write",
): HearthError {
  if (isHearthError(err)) return err;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (
    typeof code === "string" &&
    (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
  ) {
    return new HearthError(
      "HEARTH_BUSY",
      `${resource} stayed locked by another process past the busy timeout (${message}); the database itself is healthy`,
      { resource, cause: err, hint: "hearth ps   # shows who holds the store" },
    );
  }
  if (
    code === "SQLITE_FULL" ||
    (typeof code === "string" &&
      code.startsWith("SQLITE_IOERR") &&
      (/ENOSPC|disk is full/i.test(message) ||
        (isAbsolute(resource) && diskIsFull(dirname(resource)))))
  ) {
    return noSpaceError(situation, resource, err);
  }
  return new HearthError("HEARTH_SQLITE", `SQLite error on ${resource}: ${message}`, {
    resource,
    cause: err,
    hint: "hearth doctor   # checks the store without changing it",
  });
}

/** True for errors raised by SQLite through the driver (they carry a SQLITE_* code). */
export function isSqliteError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_");
}

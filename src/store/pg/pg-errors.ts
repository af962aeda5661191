/**
 * PostgreSQL's errors, as hearth reads them: every error the driver
 * raises as a HearthError with a stable code (fromPgError), which of them
 * may run a transaction again (isRetryable), which mean the connection
 * itself ended (connectionEnded), and which statements can only read
 * (onlyReads: safe to run again after such an end).
 */
import { HearthError, isHearthError } from "../../errors.js";
import { maskSecrets } from "../../mask-secrets.js";
import { maskUrl, urlPasswords } from "./url.js";

const UNAVAILABLE_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/** SQLSTATEs (and classes) that mean the server is not there for us right now. */
function unavailableState(state: string): boolean {
  return state.startsWith("08") || ["57P01", "57P02", "57P03"].includes(state);
}

/** What to do when the server has no connection slot left (SQLSTATE 53300). */
export const TOO_MANY_CONNECTIONS_HINT =
  "the server is up but out of connection slots: lower store.pg.pool.max per process (processes × pool.max must stay under max_connections), raise max_connections, or put PgBouncer in session mode in front (docs/postgres.md)";

/** True when retrying the whole transaction is safe and may succeed (serialization, deadlock). */
export function isRetryable(err: unknown): boolean {
  const state = (err as { code?: unknown }).code;
  return state === "40001" || state === "40P01";
}

/** Any error from the driver as a HearthError (HearthErrors pass through). */
export function fromPgError(err: unknown, url: string, doing: string): HearthError {
  if (isHearthError(err)) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  // A driver's message may quote the connection string: never the password.
  const message = maskSecrets(
    typeof e.message === "string" ? e.message : String(err),
    urlPasswords(url),
  );
  const resource = maskUrl(url);
  if (code === "53300")
    return new HearthError(
      "HEARTH_PG_TOO_MANY_CONNECTIONS",
      `PostgreSQL at ${resource} refused a new connection while trying to ${doing}: ${message}`,
      {
        resource,
        cause: err,
        hint: TOO_MANY_CONNECTIONS_HINT,
        details: { sqlstate: code },
      },
    );
  if (
    UNAVAILABLE_ERRNO.has(code) ||
    unavailableState(code) ||
    /timeout|terminated|not queryable/i.test(message)
  )
    return new HearthError(
      "HEARTH_PG_UNAVAILABLE",
      `PostgreSQL at ${resource} is unavailable while trying to ${doing}: ${message}`,
      {
        resource,
        cause: err,
        hint: `is the server running? pg_isready -d '${resource}'`,
        details: { [code.startsWith("E") ? "errno" : "sqlstate"]: code || null },
      },
    );
  if (code === "28P01" || code === "28000")
    return new HearthError(
      "HEARTH_PG_AUTH",
      `PostgreSQL at ${resource} rejected the login: ${message}`,
      {
        resource,
        cause: err,
        hint: "fix the user or password in store.url, or the server's pg_hba.conf",
        details: { sqlstate: code },
      },
    );
  if (code === "53100")
    return new HearthError(
      "HEARTH_NO_SPACE",
      `PostgreSQL at ${resource} is out of disk space: ${message}`,
      {
        resource,
        cause: err,
        hint: "free space on the database server; writes resume by themselves",
        details: { sqlstate: code, situation: "write" },
      },
    );
  return new HearthError(
    "HEARTH_POSTGRES",
    `PostgreSQL error while trying to ${doing}: ${message}`,
    {
      resource,
      cause: err,
      hint: "hearth doctor",
      details: { sqlstate: code || null },
    },
  );
}

/** Socket errors on a connection already made: it is gone (not: the server could not be reached). */
const ENDED_ERRNO = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * The connection itself ended under a statement: the server ended the
 * backend (57P01 administrator command, 57P02 crash, class 08), the socket
 * failed (reset, broken pipe, its own timeout, no route), or the driver
 * found it already closed. Not a statement timeout (57014, the connection
 * is alive, and the statement would take as long again), nor a failure to
 * connect (nothing was sent). Both retries on a new connection use it: a
 * transaction's before its COMMIT is sent, a read's (pool.ts).
 */
export function connectionEnded(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  if (ENDED_ERRNO.has(code) || code === "57P01" || code === "57P02" || code.startsWith("08"))
    return true;
  return (
    code === "" &&
    /Connection terminated|not queryable/i.test(typeof e.message === "string" ? e.message : "")
  );
}

/**
 * True when `text` can only read: it starts as a query does and names no
 * statement or function that writes, takes a lock or signals. Anything
 * else counts as a write (never run again after a loss): cannot tell
 * means no.
 */
export function onlyReads(text: string): boolean {
  return /^\s*(SELECT|WITH)\b/i.test(text) && !READ_SIDE_EFFECTS.test(text);
}

const READ_SIDE_EFFECTS =
  /\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|COPY|LOCK|CALL|DO|FOR\s+(NO\s+KEY\s+)?(UPDATE|SHARE|KEY\s+SHARE)|nextval|setval|set_config|pg_advisory\w*|pg_try_advisory\w*|pg_notify|pg_terminate_backend|pg_cancel_backend|lo_\w+|dblink\w*)\b/i;

import { isSqliteError } from "../../sqlite-errors.js";
import type { Connection } from "./connection.js";

/** Read-only inspections of a store's database, on its read-only connection. */

/** Schema version and application_id as stored in the database. */
export function readSchema(conn: Connection): { version: number; applicationId: number } {
  return {
    version: Number(conn.pragma("user_version")),
    applicationId: Number(conn.pragma("application_id")),
  };
}

/** SQLite's quick_check. A check that cannot even read the database has found its problem. */
export function quickCheck(conn: Connection): { ok: boolean; problems: string[] } {
  conn.uses++;
  let rows: { quick_check: string }[];
  try {
    rows = conn.db.pragma("quick_check") as { quick_check: string }[];
  } catch (err) {
    if (!isSqliteError(err)) throw err;
    return { ok: false, problems: [(err as Error).message] };
  }
  const problems = rows.map((r) => r.quick_check).filter((r) => r !== "ok");
  return { ok: problems.length === 0, problems };
}

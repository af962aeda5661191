import { HearthError } from "../../errors.js";
import { maskUrl, type PgClient, type PgPool } from "../pg/pool.js";
import { PROGRESS_KEY } from "./tables.js";

/** An unfinished `hearth migrate --to` copy into this database: its progress row. */
export interface CopyInProgress {
  /** The SQLite file being copied. */
  source: string;
  startedAt: number | null;
}

/** The progress row of a copy into this database that has not been verified yet, if any. */
export async function copyInProgress(
  client: Pick<PgClient, "query"> | PgPool,
): Promise<CopyInProgress | undefined> {
  const { rows } = await client.query("SELECT value FROM meta WHERE key = $1", [PROGRESS_KEY]);
  if (!rows[0]) return undefined;
  try {
    const p = JSON.parse(String(rows[0].value)) as { source?: unknown; startedAt?: unknown };
    return {
      source: typeof p.source === "string" ? p.source : "(unknown)",
      startedAt: typeof p.startedAt === "number" ? p.startedAt : null,
    };
  } catch {
    return { source: "(unreadable progress row)", startedAt: null };
  }
}

/**
 * A writer refuses a database a copy has not finished: its rows are a part of
 * the source, and its id sequences are not moved past them yet (a write
 * would collide with a copied row).
 */
export function migrationIncomplete(url: string, copy: CopyInProgress): HearthError {
  const resource = maskUrl(url);
  return new HearthError(
    "HEARTH_MIGRATION_INCOMPLETE",
    `${resource} holds an interrupted hearth migrate --to copy of ${copy.source}; it is not a usable store until the copy finishes, and nothing was written`,
    {
      resource,
      hint: `run the same hearth migrate --to command again (it resumes), or pass --force to copy from scratch`,
      details: { source: copy.source, startedAt: copy.startedAt },
    },
  );
}

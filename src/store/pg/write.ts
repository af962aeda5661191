import { abortedError } from "../api.js";
import type { PgClient, PgDb } from "./pool.js";

/**
 * One write transaction for a store call. An aborted `signal` refuses before
 * the transaction begins (HEARTH_ABORTED, nothing written); once it has
 * begun, it runs to its commit or rollback and the caller learns which.
 */
export async function write<T>(
  db: PgDb,
  doing: string,
  signal: AbortSignal | undefined,
  fn: (client: PgClient) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) throw abortedError(signal);
  return db.transaction(doing, fn);
}

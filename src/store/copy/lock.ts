/**
 * One `hearth migrate --to` at a time per PostgreSQL database: a session
 * advisory lock, released when the copy ends or its connection dies (a
 * killed copy leaves no lock behind). A second copy is refused, naming the
 * connection that holds it.
 */
import { HearthError } from "../../errors.js";
import { advisoryHolders, describePgHolders, MIGRATION_LOCK } from "../pg/migrate.js";
import { maskUrl, type PgClient } from "../pg/pool.js";

/** 'hearth' and 2: the copy's lock, beside the schema migration's ('hearth', 1). */
export const COPY_LOCK: readonly [number, number] = [MIGRATION_LOCK[0], 2];

export async function holdCopyLock(client: PgClient, url: string): Promise<() => Promise<void>> {
  const { rows } = await client.query("SELECT pg_try_advisory_lock($1, $2) AS got", [
    COPY_LOCK[0],
    COPY_LOCK[1],
  ]);
  if (!rows[0]?.got) {
    const holders = await advisoryHolders(client, COPY_LOCK);
    throw new HearthError(
      "HEARTH_STORE_HELD",
      `refusing to copy into ${maskUrl(url)}: another hearth migrate is copying into it (${describePgHolders(holders)})`,
      {
        resource: maskUrl(url),
        hint: "wait for it to finish; if it is stuck, end that connection (pg_terminate_backend) and run this again: the copy resumes",
        details: { holders },
      },
    );
  }
  return async () => {
    await client.query("SELECT pg_advisory_unlock($1, $2)", [COPY_LOCK[0], COPY_LOCK[1]]);
  };
}

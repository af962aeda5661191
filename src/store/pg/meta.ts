/**
 * The meta table's statements on PostgreSQL (../meta.ts decides). Every change
 * of a key holds a transaction-scoped advisory lock on that key, so a
 * compare-and-set decides on the value as it is, even when the key is
 * absent and no row lock could hold its place (two hosts taking one turn
 * lease: one wins).
 */

import type { MetaCas, MetaSql } from "../meta.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul } from "./rows.js";

/** The advisory lock class of meta keys ('meta' as a 32-bit tag); the key's hash is the object. */
export const META_LOCK = 0x6d657461;

export class PgMeta implements MetaSql {
  constructor(private readonly db: PgDb) {}

  async get(key: string): Promise<string | null> {
    const { rows } = await this.db.query("read meta", "SELECT value FROM meta WHERE key = $1", [
      key,
    ]);
    return rows[0]?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    refuseNul(key, "key");
    refuseNul(value, "value");
    await this.db.transaction("write meta", (client) =>
      casOn(client, key, () => value, Date.now()),
    );
  }

  async delete(key: string): Promise<boolean> {
    return this.db.transaction("delete meta", (client) =>
      casOn(client, key, () => null, Date.now()),
    );
  }

  /** Read-modify-write in one transaction under the key's lock. */
  async compareAndSet(key: string, decide: MetaCas["decide"]): Promise<boolean> {
    refuseNul(key, "key");
    return this.db.transaction("compare-and-set meta", (client) =>
      casOn(client, key, decide, Date.now()),
    );
  }

  async entries(): Promise<{ key: string; value: string }[]> {
    const { rows } = await this.db.query(
      "read meta",
      'SELECT key, value FROM meta ORDER BY key COLLATE "C"',
    );
    return rows.map((r) => ({ key: r.key as string, value: r.value as string }));
  }
}

/** Compare-and-set of one meta key on a client inside a transaction (turn leases ride on it). */
export async function casOn(
  client: PgClient,
  key: string,
  decide: MetaCas["decide"],
  now: number,
): Promise<boolean> {
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [META_LOCK, key]);
  const { rows } = await client.query("SELECT value FROM meta WHERE key = $1", [key]);
  const next = decide((rows[0]?.value as string | undefined) ?? null);
  if (next === undefined) return false;
  if (next === null) {
    const { rowCount } = await client.query("DELETE FROM meta WHERE key = $1", [key]);
    return (rowCount ?? 0) > 0;
  }
  refuseNul(next, "value");
  await client.query(
    `INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    [key, next, now],
  );
  return true;
}

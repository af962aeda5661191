/**
 * The meta table's statements on PostgreSQL (../meta.ts decides). Every change
 * of a key holds a transaction-scoped advisory lock on that key, so a
 * compare-and-set decides on the value as it is, even when the key is
 * absent and no row lock could hold its place (two hosts taking one turn
 * lease: one wins). A change with presence (a turn lease) asks the server
 * whether the owner the current value names is alive (owner-presence.ts),
 * never the process table of this host.
 */

import type { MetaCas, MetaDecide, MetaPresence, MetaSql } from "../meta.js";
import { type OwnerPresence, ownersAlive } from "./owner-presence.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul } from "./rows.js";

/** The advisory lock class of meta keys ('meta' as a 32-bit tag); the key's hash is the object. */
export const META_LOCK = 0x6d657461;

export class PgMeta implements MetaSql {
  constructor(
    private readonly db: PgDb,
    /** The presence of the owners this store's changes claim as (turn leases). */
    private readonly owners: OwnerPresence,
  ) {}

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
  async compareAndSet(key: string, decide: MetaDecide, presence?: MetaPresence): Promise<boolean> {
    refuseNul(key, "key");
    const change = [{ key, decide, presence }];
    return this.db.transaction(
      "compare-and-set meta",
      withClaimsHeld(this.owners, change, (client) =>
        casOn(client, key, decide, Date.now(), presence),
      ),
    );
  }

  /** Asked in a transaction of its own: an owner found dead stays locked only until it ends. */
  ownersAlive(owners: readonly string[]): Promise<Map<string, boolean>> {
    return this.db.transaction("ask owners' presence", (client) => ownersAlive(client, owners));
  }

  async entries(): Promise<{ key: string; value: string }[]> {
    const { rows } = await this.db.query(
      "read meta",
      'SELECT key, value FROM meta ORDER BY key COLLATE "C"',
    );
    return rows.map((r) => ({ key: r.key as string, value: r.value as string }));
  }
}

/** The transaction-scoped advisory lock every change of `key` holds (taken again, it is held twice). */
export async function lockMetaKey(client: PgClient, key: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [META_LOCK, key]);
}

/** Compare-and-set of one meta key on a client inside a transaction (turn leases ride on it). */
export async function casOn(
  client: PgClient,
  key: string,
  decide: MetaDecide,
  now: number,
  presence?: MetaPresence,
): Promise<boolean> {
  await lockMetaKey(client, key);
  const { rows } = await client.query("SELECT value FROM meta WHERE key = $1", [key]);
  const current = (rows[0]?.value as string | undefined) ?? null;
  const alive = await presenceAnswers(client, [{ key, decide, presence }], [current]);
  const next = decide(current, alive({ key, decide, presence }, current));
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

/**
 * Before the statements of a transaction of `changes`: hold the presence
 * of every owner they claim as (taken again if a lost connection dropped
 * it), so a value they write never names an owner the server does not see
 * alive. Fails (nothing written) when the presence cannot be held.
 */
async function holdClaims(
  owners: OwnerPresence,
  changes: Iterable<MetaCas | undefined>,
): Promise<void> {
  const claims = new Set<string>();
  for (const c of changes) if (c?.presence) claims.add(c.presence.claims);
  for (const owner of claims) await owners.hold(owner);
}

/**
 * A transaction body that holds the claims of `changes` first, on every
 * run: a transaction whose connection was lost runs its body again
 * (pool.ts), and what ended that connection (a server restart) may have
 * ended the presence connection too.
 */
export function withClaimsHeld<T>(
  owners: OwnerPresence,
  changes: readonly (MetaCas | undefined)[],
  fn: (client: PgClient) => Promise<T>,
): (client: PgClient) => Promise<T> {
  return async (client) => {
    await holdClaims(owners, changes);
    return fn(client);
  };
}

/**
 * Inside the transaction, under the keys' locks: ask the server once about
 * every owner `values` name (for the changes with presence). The owners the
 * changes claim as are not asked: holdClaims held them just before, and
 * should that connection have dropped since, calling them alive only makes
 * this process's own other turns wait (other hosts ask the server). Returns
 * what decide's second argument is for a change and the value it is shown:
 * the server's answer, or undefined when the change has no presence or the
 * value names no owner. No round trip when no value names another owner
 * (a claim of a free session).
 */
export async function presenceAnswers(
  client: PgClient,
  changes: readonly (MetaCas | undefined)[],
  values: Iterable<string | null>,
): Promise<(change: MetaCas, current: string | null) => boolean | undefined> {
  const withPresence = changes.filter((c): c is MetaCas & { presence: MetaPresence } =>
    Boolean(c?.presence),
  );
  if (withPresence.length === 0) return () => undefined;
  const claims = new Set(withPresence.map((c) => c.presence.claims));
  const owners = new Set<string>();
  for (const c of withPresence) {
    for (const v of values) {
      const owner = v === null ? undefined : c.presence.ownerOf(v);
      if (owner !== undefined && !claims.has(owner)) owners.add(owner);
    }
  }
  const alive = await ownersAlive(client, owners);
  for (const owner of claims) alive.set(owner, true);
  return (change, current) => {
    const owner = current === null ? undefined : change.presence?.ownerOf(current);
    return owner === undefined ? undefined : alive.get(owner);
  };
}

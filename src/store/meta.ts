/**
 * The meta key/value table: small operational state (schedules, markers,
 * versions), one value per key, read-modify-write by compare-and-set.
 * Backend-neutral: the argument checks live here, the SQL in
 * sqlite/meta.ts and pg/meta.ts (MetaSql).
 */

import { invalidArg, requireString } from "./args.js";

/**
 * Server-held presence for a meta value that names an owner (a turn lease
 * names its process). A backend whose server can say whether an owner is
 * alive (PostgreSQL: the owner's session advisory lock, owner-presence.ts)
 * holds `claims` before the change's transaction (a value it writes names a
 * live owner, or the write fails) and hands `decide` the server's answer for
 * the owner the current value names. A backend without one (SQLite: one
 * machine, where the process table answers) hands `decide` undefined.
 */
export interface MetaPresence {
  /** The owner this change writes into the value (this process). */
  claims: string;
  /** The owner a stored value names; undefined when it names none (older values). */
  ownerOf(value: string): string | undefined;
}

/** `decide`'s second argument: is the current value's owner alive, as the server says; undefined when no server said. */
export type MetaDecide = (
  current: string | null,
  ownerAlive?: boolean,
) => string | null | undefined;

/** A meta change that rides along with a write: `decide` may throw to fail it. */
export interface MetaCas {
  key: string;
  decide: MetaDecide;
  presence?: MetaPresence | undefined;
}

/** What a backend does for Meta: the statements, nothing decided. */
export interface MetaSql {
  get(key: string): Promise<string | null>;
  /** Insert or replace, stamped with the time. */
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<boolean>;
  /**
   * One transaction: read the value, apply `decide`'s answer (new value,
   * null: delete, undefined: keep); with `presence`, as MetaPresence says.
   */
  compareAndSet(key: string, decide: MetaDecide, presence?: MetaPresence): Promise<boolean>;
  /** Every entry, by key in code point order. */
  entries(): Promise<{ key: string; value: string }[]>;
  /** Owner -> alive, as the server holds presence (PostgreSQL); absent where no server does. */
  ownersAlive?(owners: readonly string[]): Promise<Map<string, boolean>>;
}

/** A small key/value table for operational state (schedules, markers, versions). */
export class Meta {
  constructor(private readonly sql: MetaSql) {}

  async get(key: string): Promise<string | null> {
    return this.sql.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    if (typeof value !== "string") throw new TypeError("meta values are strings");
    await this.sql.set(key, value);
  }

  async delete(key: string): Promise<boolean> {
    return this.sql.delete(key);
  }

  /**
   * Read-modify-write in one transaction (IMMEDIATE on SQLite, under the
   * key's advisory lock on PostgreSQL): `decide` gets the current value
   * (null when absent) and returns the new value, null to delete, or
   * undefined to leave it. Returns whether it changed anything. With
   * `presence`, a backend that has server-held presence also tells `decide`
   * whether the owner the current value names is alive (MetaPresence).
   */
  async compareAndSet(key: string, decide: MetaDecide, presence?: MetaPresence): Promise<boolean> {
    return this.sql.compareAndSet(key, decide, presence);
  }

  /**
   * Whether each owner (MetaPresence) is alive, as the server says;
   * undefined where no server holds presence (SQLite: ask the process table).
   */
  async ownersAlive(owners: readonly string[]): Promise<Map<string, boolean> | undefined> {
    if (!Array.isArray(owners)) throw invalidArg("owners must be an array of strings");
    for (const owner of owners) requireString(owner, "owners[]");
    return this.sql.ownersAlive?.(owners);
  }

  async entries(): Promise<Record<string, string>> {
    return Object.fromEntries((await this.sql.entries()).map((r) => [r.key, r.value]));
  }
}

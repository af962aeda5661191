/**
 * The meta key/value table: small operational state (schedules, markers,
 * versions), one value per key, read-modify-write by compare-and-set.
 * Backend-neutral: the argument checks live here, the SQL in
 * sqlite/meta.ts and pg/meta.ts (MetaSql).
 */

/** A meta change that rides along with a write: `decide` may throw to fail it. */
export interface MetaCas {
  key: string;
  decide: (current: string | null) => string | null | undefined;
}

/** What a backend does for Meta: the statements, nothing decided. */
export interface MetaSql {
  get(key: string): Promise<string | null>;
  /** Insert or replace, stamped with the time. */
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** One transaction: read the value, apply `decide`'s answer (new value, null: delete, undefined: keep). */
  compareAndSet(key: string, decide: MetaCas["decide"]): Promise<boolean>;
  /** Every entry, by key in code point order. */
  entries(): Promise<{ key: string; value: string }[]>;
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
   * undefined to leave it. Returns whether it changed anything.
   */
  async compareAndSet(
    key: string,
    decide: (current: string | null) => string | null | undefined,
  ): Promise<boolean> {
    return this.sql.compareAndSet(key, decide);
  }

  async entries(): Promise<Record<string, string>> {
    return Object.fromEntries((await this.sql.entries()).map((r) => [r.key, r.value]));
  }
}

import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

/** A small key/value table for operational state (schedules, markers, versions). */
export class Meta {
  constructor(private readonly access: Access) {}

  async get(key: string): Promise<string | null> {
    const row = this.access.read().stmt("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    if (typeof value !== "string") throw new TypeError("meta values are strings");
    await this.access.writeTransaction((conn) =>
      conn
        .stmt(
          `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        )
        .run(key, value, this.access.now()),
    );
  }

  async delete(key: string): Promise<boolean> {
    return this.access.writeTransaction(
      (conn) => conn.stmt("DELETE FROM meta WHERE key = ?").run(key).changes > 0,
    );
  }

  /**
   * Read-modify-write in one IMMEDIATE transaction: `decide` gets the
   * current value (null when absent) and returns the new value, null to
   * delete, or undefined to leave it. Returns whether it changed anything.
   */
  async compareAndSet(
    key: string,
    decide: (current: string | null) => string | null | undefined,
  ): Promise<boolean> {
    return this.access.writeTransaction((conn) => casOn(conn, key, decide, this.access.now()));
  }

  async entries(): Promise<Record<string, string>> {
    const rows = this.access.read().stmt("SELECT key, value FROM meta ORDER BY key").all() as {
      key: string;
      value: string;
    }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }
}

/** A meta change that rides along with a write: `decide` may throw to fail it. */
export interface MetaCas {
  key: string;
  decide: (current: string | null) => string | null | undefined;
}

/** Compare-and-set of one meta key on a connection that is inside a write transaction. */
export function casOn(
  conn: Connection,
  key: string,
  decide: MetaCas["decide"],
  now: number,
): boolean {
  const row = conn.stmt("SELECT value FROM meta WHERE key = ?").get(key) as
    | { value: string }
    | undefined;
  const next = decide(row?.value ?? null);
  if (next === undefined) return false;
  if (next === null) return conn.stmt("DELETE FROM meta WHERE key = ?").run(key).changes > 0;
  conn
    .stmt(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(key, next, now);
  return true;
}

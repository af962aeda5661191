import type { MetaCas, MetaSql } from "../meta.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

const UPSERT = `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/** The meta table's statements on SQLite (../meta.ts decides). */
export class SqliteMeta implements MetaSql {
  constructor(private readonly access: Access) {}

  async get(key: string): Promise<string | null> {
    const row = this.access.read().stmt("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.access.writeTransaction((conn) =>
      conn.stmt(UPSERT).run(key, value, this.access.now()),
    );
  }

  async delete(key: string): Promise<boolean> {
    return this.access.writeTransaction(
      (conn) => conn.stmt("DELETE FROM meta WHERE key = ?").run(key).changes > 0,
    );
  }

  async compareAndSet(key: string, decide: MetaCas["decide"]): Promise<boolean> {
    return this.access.writeTransaction((conn) => casOn(conn, key, decide, this.access.now()));
  }

  async entries(): Promise<{ key: string; value: string }[]> {
    // A gateway reads them on every profile it serves at start (turns left mid-loop): a probe.
    return this.access.probe().stmt("SELECT key, value FROM meta ORDER BY key").all() as {
      key: string;
      value: string;
    }[];
  }
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
  conn.stmt(UPSERT).run(key, next, now);
  return true;
}

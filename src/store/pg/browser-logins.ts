import {
  type BrowserLoginRow,
  type BrowserLoginsSql,
  insertParams,
  LOGIN_SQL,
  loginFromColumns,
} from "../browser-logins.js";
import { dollarParams } from "../sql.js";
import type { PgDb } from "./pool.js";

/** Dashboard browser logins on PostgreSQL (../browser-logins.ts decides): shared by every host of the database. */
export class PgBrowserLogins implements BrowserLoginsSql {
  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  async insert(hash: string, row: BrowserLoginRow): Promise<void> {
    await this.run("store a dashboard login", LOGIN_SQL.insert, insertParams(hash, row));
  }

  async find(hash: string): Promise<BrowserLoginRow | undefined> {
    const { rows } = await this.run("find a dashboard login", LOGIN_SQL.find, [hash]);
    return rows[0] ? loginFromColumns(rows[0]) : undefined;
  }

  async touch(hash: string, at: number, expiresAt: number): Promise<void> {
    await this.run("renew a dashboard login", LOGIN_SQL.touch, [at, expiresAt, hash]);
  }

  async revoke(hash: string, at: number): Promise<void> {
    await this.run("end a dashboard login", LOGIN_SQL.revoke, [at, hash]);
  }

  async deleteEnded(before: number): Promise<number> {
    const r = await this.run("delete ended dashboard logins", LOGIN_SQL.deleteEnded, [
      before,
      before,
    ]);
    return r.rowCount ?? 0;
  }

  /** A LOGIN_SQL statement with its `?` numbered for PostgreSQL. */
  private run(doing: string, sql: string, params: unknown[]) {
    return this.db.query(doing, dollarParams(sql), params);
  }
}

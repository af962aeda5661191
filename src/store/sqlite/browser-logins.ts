import {
  type BrowserLoginRow,
  type BrowserLoginsSql,
  insertParams,
  LOGIN_SQL,
  loginFromColumns,
} from "../browser-logins.js";
import type { Access } from "./access.js";

/** Dashboard browser logins on SQLite (../browser-logins.ts decides). */
export class SqliteBrowserLogins implements BrowserLoginsSql {
  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  async insert(hash: string, row: BrowserLoginRow): Promise<void> {
    await this.write(LOGIN_SQL.insert, insertParams(hash, row));
  }

  async find(hash: string): Promise<BrowserLoginRow | undefined> {
    const row = this.access.read().stmt(LOGIN_SQL.find).get(hash) as
      | Record<string, unknown>
      | undefined;
    return row ? loginFromColumns(row) : undefined;
  }

  async touch(hash: string, at: number, expiresAt: number): Promise<void> {
    await this.write(LOGIN_SQL.touch, [at, expiresAt, hash]);
  }

  async revoke(hash: string, at: number): Promise<void> {
    await this.write(LOGIN_SQL.revoke, [at, hash]);
  }

  deleteEnded(before: number): Promise<number> {
    return this.write(LOGIN_SQL.deleteEnded, [before, before]);
  }

  /** One LOGIN_SQL change in its own write transaction: the rows it changed. */
  private write(sql: string, params: unknown[]): Promise<number> {
    return this.access.writeTransaction((conn) => conn.stmt(sql).run(...params).changes);
  }
}

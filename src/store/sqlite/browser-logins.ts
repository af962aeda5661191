import {
  type BrowserLoginRow,
  type BrowserLoginsSql,
  loginFromColumns,
  SELECT_LOGIN,
} from "../browser-logins.js";
import type { Access } from "./access.js";

/** Dashboard browser logins on SQLite (../browser-logins.ts decides). */
export class SqliteBrowserLogins implements BrowserLoginsSql {
  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  async insert(hash: string, r: BrowserLoginRow): Promise<void> {
    await this.access.writeTransaction((conn) => {
      conn
        .stmt(
          `INSERT INTO dashboard_logins (hash, family_id, profile, scope, all_profiles, created_at, last_seen_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          hash,
          r.familyId,
          r.profile,
          r.scope,
          r.allProfiles ? 1 : 0,
          r.createdAt,
          r.lastSeenAt,
          r.expiresAt,
        );
    });
  }

  async find(hash: string): Promise<BrowserLoginRow | undefined> {
    const row = this.access.read().stmt(SELECT_LOGIN).get(hash) as
      | Record<string, unknown>
      | undefined;
    return row ? loginFromColumns(row) : undefined;
  }

  async touch(hash: string, at: number, expiresAt: number): Promise<void> {
    await this.access.writeTransaction((conn) => {
      conn
        .stmt(
          "UPDATE dashboard_logins SET last_seen_at = ?, expires_at = ? WHERE hash = ? AND revoked_at IS NULL",
        )
        .run(at, expiresAt, hash);
    });
  }

  async revoke(hash: string, at: number): Promise<void> {
    await this.access.writeTransaction((conn) => {
      conn
        .stmt("UPDATE dashboard_logins SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL")
        .run(at, hash);
    });
  }

  async deleteEnded(before: number): Promise<number> {
    return this.access.writeTransaction(
      (conn) =>
        conn
          .stmt("DELETE FROM dashboard_logins WHERE expires_at < ? OR revoked_at < ?")
          .run(before, before).changes,
    );
  }
}

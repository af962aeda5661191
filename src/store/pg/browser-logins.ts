import {
  type BrowserLoginRow,
  type BrowserLoginsSql,
  loginFromColumns,
  SELECT_LOGIN,
} from "../browser-logins.js";
import type { PgDb } from "./pool.js";

/** Dashboard browser logins on PostgreSQL (../browser-logins.ts decides): shared by every host of the database. */
export class PgBrowserLogins implements BrowserLoginsSql {
  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  async insert(hash: string, r: BrowserLoginRow): Promise<void> {
    await this.db.query(
      "store a dashboard login",
      `INSERT INTO dashboard_logins (hash, family_id, profile, scope, all_profiles, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        hash,
        r.familyId,
        r.profile,
        r.scope,
        r.allProfiles ? 1 : 0,
        r.createdAt,
        r.lastSeenAt,
        r.expiresAt,
      ],
    );
  }

  async find(hash: string): Promise<BrowserLoginRow | undefined> {
    const { rows } = await this.db.query(
      "find a dashboard login",
      SELECT_LOGIN.replace("?", "$1"),
      [hash],
    );
    return rows[0] ? loginFromColumns(rows[0]) : undefined;
  }

  async touch(hash: string, at: number, expiresAt: number): Promise<void> {
    await this.db.query(
      "renew a dashboard login",
      "UPDATE dashboard_logins SET last_seen_at = $2, expires_at = $3 WHERE hash = $1 AND revoked_at IS NULL",
      [hash, at, expiresAt],
    );
  }

  async revoke(hash: string, at: number): Promise<void> {
    await this.db.query(
      "end a dashboard login",
      "UPDATE dashboard_logins SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL",
      [hash, at],
    );
  }

  async deleteEnded(before: number): Promise<number> {
    const { rowCount } = await this.db.query(
      "delete ended dashboard logins",
      "DELETE FROM dashboard_logins WHERE expires_at < $1 OR revoked_at < $1",
      [before],
    );
    return rowCount ?? 0;
  }
}

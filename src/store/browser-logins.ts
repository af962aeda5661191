import { nodeCrypto } from "../builtins.js";
import type { TokenGrant } from "./token-scopes.js";
import { scopeOf } from "./token-scopes.js";
import { hashToken } from "./tokens.js";

/**
 * Dashboard browser logins kept in the store, backend-neutral: any
 * dashboard on the same database accepts a cookie another one issued (many
 * hosts behind a load balancer). Only the SHA-256 of the cookie's random
 * 256-bit id is stored; the CSRF token is derived from the id itself
 * (`csrfFor`), so it is never stored and validates on every host. A login
 * ends after `idleMs` without a request (its expiry moves on as it is used),
 * when logged out, or when its token family is revoked (`hearth token
 * revoke`). The statements are sqlite/browser-logins.ts and
 * pg/browser-logins.ts (BrowserLoginsSql).
 */

/** What a login carries: its token family, profile and grant. */
export interface BrowserLoginGrant extends TokenGrant {
  familyId: string;
  profile: string;
}

export interface BrowserLoginRow extends BrowserLoginGrant {
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  /** Logged out, or its token family revoked. */
  revokedAt: number | null;
}

export interface BrowserLoginsSql {
  now(): number;
  insert(hash: string, row: BrowserLoginRow): Promise<void>;
  /** The row with its family's revocation folded into revokedAt. */
  find(hash: string): Promise<BrowserLoginRow | undefined>;
  /** Move the expiry on; a revoked row stays revoked. */
  touch(hash: string, at: number, expiresAt: number): Promise<void>;
  revoke(hash: string, at: number): Promise<void>;
  /** Delete rows expired or revoked before `before`. */
  deleteEnded(before: number): Promise<number>;
}

/** A live login as a dashboard sees it. */
export interface BrowserLogin extends BrowserLoginGrant {
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

/** How often (at most) a used login's expiry is written back. */
export const TOUCH_EVERY_MS = 60_000;

export class BrowserLogins {
  constructor(private readonly sql: BrowserLoginsSql) {}

  /** A new login: the cookie value to hand the browser, and the login. */
  async create(
    grant: BrowserLoginGrant,
    idleMs: number,
  ): Promise<{ id: string; login: BrowserLogin }> {
    const id = nodeCrypto().randomBytes(32).toString("base64url");
    const now = this.sql.now();
    const row: BrowserLoginRow = {
      familyId: grant.familyId,
      profile: grant.profile,
      scope: scopeOf(grant.scope),
      allProfiles: grant.allProfiles,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + idleMs,
      revokedAt: null,
    };
    await this.sql.deleteEnded(now);
    await this.sql.insert(hashToken(id), row);
    return { id, login: live(id, row) };
  }

  /** The live login of a cookie value; undefined for unknown, expired, logged out or revoked. */
  async find(id: string): Promise<BrowserLogin | undefined> {
    const row = await this.sql.find(hashToken(id));
    if (!row || row.revokedAt !== null || this.sql.now() >= row.expiresAt) return undefined;
    return live(id, row);
  }

  /** Record a use: the expiry moves to `idleMs` from now. */
  async touch(id: string, idleMs: number): Promise<void> {
    const now = this.sql.now();
    await this.sql.touch(hashToken(id), now, now + idleMs);
  }

  /** Log out: refused on every host from now on. */
  async end(id: string): Promise<void> {
    await this.sql.revoke(hashToken(id), this.sql.now());
  }
}

/** The CSRF token of a login: derived from its cookie id, never stored. */
export function csrfFor(id: string): string {
  return nodeCrypto()
    .createHash("sha256")
    .update(`hearth-dashboard-csrf\0${id}`)
    .digest("base64url");
}

/** A row as both backends select it (SELECT_LOGIN's columns). */
export function loginFromColumns(r: Record<string, unknown>): BrowserLoginRow {
  const revoked = r.revoked_at ?? r.family_revoked_at ?? null;
  return {
    familyId: String(r.family_id),
    profile: String(r.profile),
    scope: scopeOf(r.scope),
    allProfiles: Number(r.all_profiles) === 1,
    createdAt: Number(r.created_at),
    lastSeenAt: Number(r.last_seen_at),
    expiresAt: Number(r.expires_at),
    revokedAt: revoked === null ? null : Number(revoked),
  };
}

/**
 * The statements, the same on both backends (`?` placeholders; PostgreSQL
 * numbers them). `find` reads loginFromColumns' columns, the family's
 * revocation joined.
 */
export const LOGIN_SQL = {
  insert: `INSERT INTO dashboard_logins (hash, family_id, profile, scope, all_profiles, created_at, last_seen_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  find: `SELECT b.family_id, b.profile, b.scope, b.all_profiles, b.created_at,
       b.last_seen_at, b.expires_at, b.revoked_at, f.revoked_at AS family_revoked_at
  FROM dashboard_logins b LEFT JOIN auth_families f ON f.id = b.family_id
 WHERE b.hash = ?`,
  /** (at, expiresAt, hash) */
  touch:
    "UPDATE dashboard_logins SET last_seen_at = ?, expires_at = ? WHERE hash = ? AND revoked_at IS NULL",
  /** (at, hash) */
  revoke: "UPDATE dashboard_logins SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL",
  /** (before, before) */
  deleteEnded: "DELETE FROM dashboard_logins WHERE expires_at < ? OR revoked_at < ?",
} as const;

/** LOGIN_SQL.insert's parameters. */
export function insertParams(hash: string, r: BrowserLoginRow): unknown[] {
  const flag = r.allProfiles ? 1 : 0;
  return [hash, r.familyId, r.profile, r.scope, flag, r.createdAt, r.lastSeenAt, r.expiresAt];
}

function live(id: string, row: BrowserLoginRow): BrowserLogin {
  return {
    familyId: row.familyId,
    profile: row.profile,
    scope: row.scope,
    allProfiles: row.allProfiles,
    csrf: csrfFor(id),
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    expiresAt: row.expiresAt,
  };
}

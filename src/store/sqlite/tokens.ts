import { openPair, sealPair } from "../rotation-seal.js";
import { scopeOf, type TokenScope } from "../token-scopes.js";
import {
  type AuthLifetimes,
  mintPair,
  type NewPairing,
  REUSED,
  type RotateOutcome,
  replayOutcome,
  reuseAuditRow,
  type TokenFamily,
  type TokenKind,
  type TokenPair,
  type TokenRow,
  type TokensSql,
  usablePairing,
  usableRefresh,
} from "../tokens.js";
import type { Access } from "./access.js";
import { insertAudit } from "./audit.js";
import type { Connection } from "./connection.js";

/**
 * The token statements on SQLite (../tokens.ts decides). Every change is
 * one IMMEDIATE transaction: two presenters of one refresh token are
 * serialized, and the second finds it spent.
 */
export class SqliteTokens implements TokensSql {
  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  async createPairing(f: NewPairing): Promise<void> {
    await this.access.writeTransaction((conn) => {
      conn
        .stmt(
          "INSERT INTO auth_families (id, label, created_at, scope, all_profiles) VALUES (?, ?, ?, ?, ?)",
        )
        .run(f.id, f.label, f.createdAt, f.scope, f.allProfiles ? 1 : 0);
      conn
        .stmt(
          "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES (?, ?, 'pairing', ?, ?)",
        )
        .run(f.codeHash, f.id, f.createdAt, f.expiresAt);
    });
  }

  async redeemPairing(hash: string, lifetimes: AuthLifetimes): Promise<TokenPair> {
    return this.access.writeTransaction((conn) => {
      const now = this.access.now();
      const row = usablePairing(findToken(conn, hash, "pairing"), now);
      conn.stmt("UPDATE auth_tokens SET used_at = ? WHERE hash = ?").run(now, hash);
      return issue(conn, row.familyId, row.scope, lifetimes, now);
    });
  }

  async rotate(
    refreshToken: string,
    hash: string,
    lifetimes: AuthLifetimes,
    graceMs: number,
  ): Promise<RotateOutcome> {
    return this.access.writeTransaction((conn) => {
      const now = this.access.now();
      const row = usableRefresh(findToken(conn, hash, "refresh"), now);
      if (row.usedAt !== null) {
        const sealed = conn
          .stmt(
            `SELECT r.sealed FROM auth_rotations r JOIN auth_families f ON f.id = r.family_id
             WHERE r.hash = ? AND r.expires_at > ? AND f.revoked_at IS NULL`,
          )
          .pluck()
          .get(hash, now) as Uint8Array | undefined;
        const outcome = replayOutcome(sealed && openPair(refreshToken, hash, sealed), row.familyId);
        if (outcome.kind === "reused" && this.revokeOn(conn, row.familyId, REUSED))
          insertAudit(conn, reuseAuditRow(row.familyId, now));
        return outcome;
      }
      conn.stmt("UPDATE auth_tokens SET used_at = ? WHERE hash = ?").run(now, hash);
      const pair = issue(conn, row.familyId, row.scope, lifetimes, now);
      if (graceMs > 0) {
        conn.stmt("DELETE FROM auth_rotations WHERE expires_at <= ?").run(now);
        conn
          .stmt(
            "INSERT OR REPLACE INTO auth_rotations (hash, family_id, sealed, expires_at) VALUES (?, ?, ?, ?)",
          )
          .run(hash, row.familyId, sealPair(refreshToken, hash, pair), now + graceMs);
      }
      return { kind: "rotated", pair } as const;
    });
  }

  async findToken(hash: string, kind: TokenKind): Promise<TokenRow | undefined> {
    return findToken(this.access.read(), hash, kind);
  }

  async revokeFamily(familyId: string, reason: string): Promise<boolean> {
    return this.access.writeTransaction((conn) => this.revokeOn(conn, familyId, reason));
  }

  async families(): Promise<TokenFamily[]> {
    const rows = this.access
      .read()
      .stmt(
        `SELECT id, label, created_at AS createdAt, revoked_at AS revokedAt, revoked_reason AS revokedReason,
           scope, all_profiles AS allProfiles FROM auth_families ORDER BY created_at`,
      )
      .all() as (Omit<TokenFamily, "allProfiles"> & { allProfiles: number })[];
    return rows.map((r) => ({ ...r, scope: scopeOf(r.scope), allProfiles: r.allProfiles === 1 }));
  }

  async rotations(familyId: string): Promise<number> {
    return Number(
      this.access
        .read()
        .stmt(
          "SELECT count(*) FROM auth_tokens WHERE family_id = ? AND kind = 'refresh' AND used_at IS NOT NULL",
        )
        .pluck()
        .get(familyId),
    );
  }

  private revokeOn(conn: Connection, familyId: string, reason: string): boolean {
    conn.stmt("DELETE FROM auth_rotations WHERE family_id = ?").run(familyId);
    return (
      conn
        .stmt(
          "UPDATE auth_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
        )
        .run(this.access.now(), reason, familyId).changes === 1
    );
  }
}

function issue(
  conn: Connection,
  familyId: string,
  scope: TokenScope,
  lifetimes: AuthLifetimes,
  now: number,
): TokenPair {
  const { pair, rows } = mintPair(familyId, scope, lifetimes, now);
  const insert = conn.stmt(
    "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
  );
  for (const r of rows) insert.run(r.hash, familyId, r.kind, now, r.expiresAt);
  return pair;
}

function findToken(conn: Connection, hash: string, kind: TokenKind): TokenRow | undefined {
  const row = conn
    .stmt(
      `SELECT t.family_id AS familyId, t.expires_at AS expiresAt, t.used_at AS usedAt, f.revoked_at AS revokedAt,
         f.scope, f.all_profiles AS allProfiles
       FROM auth_tokens t JOIN auth_families f ON f.id = t.family_id WHERE t.hash = ? AND t.kind = ?`,
    )
    .get(hash, kind) as (Omit<TokenRow, "allProfiles"> & { allProfiles: number }) | undefined;
  return row && { ...row, scope: scopeOf(row.scope), allProfiles: row.allProfiles === 1 };
}

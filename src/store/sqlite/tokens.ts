import { nodeCrypto } from "../../builtins.js";
import { HearthError } from "../../errors.js";
import { openPair, sealPair } from "../rotation-seal.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  /** Seconds until the access token expires. */
  expiresIn: number;
  familyId: string;
}

export interface AuthLifetimes {
  accessMs: number;
  refreshMs: number;
}

export interface RotateOptions {
  /**
   * Keep the new pair, sealed under the presented token, for this long:
   * presenting the same token again within it (from any process or host)
   * answers that same pair instead of a replay (D6). 0: no window.
   */
  graceMs?: number;
}

export type RotateOutcome =
  | { kind: "rotated"; pair: TokenPair }
  /** The token was already rotated: a replay. The family is revoked. */
  | { kind: "reused"; familyId: string };

const PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** SHA-256 of a token: the only form a token is stored in. */
export function hashToken(token: string): string {
  return nodeCrypto().createHash("sha256").update(token).digest("hex");
}

/**
 * Remote sessions (D6): one-time pairing codes, short-lived access tokens
 * and rotating refresh tokens, grouped in families. Only hashes are stored.
 * Presenting a refresh token that was already rotated revokes its whole
 * family, except within the grace window of its rotation: a rotation asked
 * with `graceMs` keeps its new pair sealed under the old token
 * (./rotation-seal.ts), so a second presenter of that token, in any
 * process, gets the same pair (D6). The gateway also coalesces concurrent
 * refreshes in memory, saving the store a round trip.
 */
export class Tokens {
  constructor(private readonly access: Access) {}

  /** A new family with a one-time pairing code (returned once, stored hashed). */
  async createPairing(options: {
    label?: string;
    ttlMs: number;
  }): Promise<{ code: string; familyId: string; expiresAt: number }> {
    const code = Array.from(
      { length: 10 },
      () => PAIRING_ALPHABET[nodeCrypto().randomInt(PAIRING_ALPHABET.length)],
    ).join("");
    const familyId = nodeCrypto().randomUUID();
    const now = this.access.now();
    const expiresAt = now + options.ttlMs;
    await this.access.writeTransaction((conn) => {
      conn
        .stmt("INSERT INTO auth_families (id, label, created_at) VALUES (?, ?, ?)")
        .run(familyId, options.label ?? null, now);
      conn
        .stmt(
          "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES (?, ?, 'pairing', ?, ?)",
        )
        .run(hashToken(normalizeCode(code)), familyId, now, expiresAt);
    });
    return { code, familyId, expiresAt };
  }

  /** Redeem a pairing code once for the family's first token pair. */
  async redeemPairing(code: string, lifetimes: AuthLifetimes): Promise<TokenPair> {
    const hash = hashToken(normalizeCode(code));
    return this.access.writeTransaction((conn) => {
      const row = findToken(conn, hash, "pairing");
      const now = this.access.now();
      if (!row || row.usedAt !== null || row.revokedAt !== null || row.expiresAt <= now)
        throw unauthorized("the pairing code is unknown, used or expired");
      conn.stmt("UPDATE auth_tokens SET used_at = ? WHERE hash = ?").run(now, hash);
      return this.issue(row.familyId, lifetimes);
    });
  }

  /**
   * Rotate a refresh token: the old one is spent; a replay of a spent one
   * revokes the family, unless it comes within the grace window of its
   * rotation with the token itself (it then gets the same pair).
   */
  async rotate(
    refreshToken: string,
    lifetimes: AuthLifetimes,
    options: RotateOptions = {},
  ): Promise<RotateOutcome> {
    const hash = hashToken(refreshToken);
    return this.access.writeTransaction((conn) => {
      const row = findToken(conn, hash, "refresh");
      const now = this.access.now();
      if (!row || row.revokedAt !== null || row.expiresAt <= now)
        throw unauthorized("the refresh token is unknown, revoked or expired");
      if (row.usedAt !== null) {
        const sealed = conn
          .stmt(
            `SELECT r.sealed FROM auth_rotations r JOIN auth_families f ON f.id = r.family_id
             WHERE r.hash = ? AND r.expires_at > ? AND f.revoked_at IS NULL`,
          )
          .pluck()
          .get(hash, now) as Uint8Array | undefined;
        const shared = sealed && openPair(refreshToken, hash, sealed);
        if (shared) return { kind: "rotated", pair: shared } as const;
        this.revokeOn(row.familyId, "a rotated refresh token was presented again (possible theft)");
        return { kind: "reused", familyId: row.familyId } as const;
      }
      conn.stmt("UPDATE auth_tokens SET used_at = ? WHERE hash = ?").run(now, hash);
      const pair = this.issue(row.familyId, lifetimes);
      const graceMs = options.graceMs ?? 0;
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

  /** The family of a valid access token, or a HEARTH_UNAUTHORIZED error. */
  async verifyAccess(accessToken: string): Promise<{ familyId: string }> {
    const row = findToken(this.access.read(), hashToken(accessToken), "access");
    if (!row || row.revokedAt !== null || row.expiresAt <= this.access.now())
      throw unauthorized("the access token is unknown, revoked or expired");
    return { familyId: row.familyId };
  }

  async revokeFamily(familyId: string, reason: string): Promise<boolean> {
    return this.access.writeTransaction((conn) => this.revokeOn(familyId, reason, conn));
  }

  /** Families with their state, for `hearth token list`. */
  async families(): Promise<
    {
      id: string;
      label: string | null;
      createdAt: number;
      revokedAt: number | null;
      revokedReason: string | null;
    }[]
  > {
    return this.access
      .read()
      .stmt(
        "SELECT id, label, created_at AS createdAt, revoked_at AS revokedAt, revoked_reason AS revokedReason FROM auth_families ORDER BY created_at",
      )
      .all() as never;
  }

  /** How many refresh rotations a family has seen (tests and audits). */
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

  private issue(familyId: string, lifetimes: AuthLifetimes): TokenPair {
    const conn = this.access.write();
    const now = this.access.now();
    const accessToken = `hat_${nodeCrypto().randomBytes(32).toString("base64url")}`;
    const refreshToken = `hrt_${nodeCrypto().randomBytes(32).toString("base64url")}`;
    const insert = conn.stmt(
      "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    );
    insert.run(hashToken(accessToken), familyId, "access", now, now + lifetimes.accessMs);
    insert.run(hashToken(refreshToken), familyId, "refresh", now, now + lifetimes.refreshMs);
    return {
      accessToken,
      refreshToken,
      expiresIn: Math.floor(lifetimes.accessMs / 1000),
      familyId,
    };
  }

  private revokeOn(familyId: string, reason: string, conn = this.access.write()): boolean {
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

interface TokenRow {
  familyId: string;
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
}

function findToken(
  conn: Connection,
  hash: string,
  kind: "pairing" | "access" | "refresh",
): TokenRow | undefined {
  return conn
    .stmt(
      `SELECT t.family_id AS familyId, t.expires_at AS expiresAt, t.used_at AS usedAt, f.revoked_at AS revokedAt
       FROM auth_tokens t JOIN auth_families f ON f.id = t.family_id WHERE t.hash = ? AND t.kind = ?`,
    )
    .get(hash, kind) as TokenRow | undefined;
}

function normalizeCode(code: string): string {
  return String(code)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "");
}

function unauthorized(message: string): HearthError {
  return new HearthError("HEARTH_UNAUTHORIZED", message, {
    hint: "pair again: hearth token create",
  });
}

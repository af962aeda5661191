import { nodeCrypto } from "../builtins.js";
import { HearthError } from "../errors.js";
import { type AuditRow, auditRow, localActor } from "./audit.js";
import { DEFAULT_SCOPE, type TokenGrant, type TokenScope } from "./token-scopes.js";

/**
 * Remote sessions (D6), backend-neutral: pairing codes, token minting and
 * hashing, and the rules that decide whether a presented token is usable
 * and what a replay means. The statements and transactions are
 * sqlite/tokens.ts and pg/tokens.ts (TokensSql); they call these rules.
 */

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  /** Seconds until the access token expires. */
  expiresIn: number;
  familyId: string;
  /** The family's scope (./token-scopes.ts), told to the client. */
  scope: TokenScope;
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

/** A family as `hearth token list` shows it. */
export interface TokenFamily extends TokenGrant {
  id: string;
  label: string | null;
  createdAt: number;
  revokedAt: number | null;
  revokedReason: string | null;
}

export type TokenKind = "pairing" | "access" | "refresh";

/** A stored token with its family's revocation and grant. */
export interface TokenRow extends TokenGrant {
  familyId: string;
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
}

/** A freshly minted pair and the hashed rows that store it. */
export interface MintedPair {
  pair: TokenPair;
  rows: { hash: string; kind: "access" | "refresh"; expiresAt: number }[];
}

/** A family and its pairing code as TokensSql.createPairing inserts them. */
export interface NewPairing extends TokenGrant {
  id: string;
  label: string | null;
  codeHash: string;
  createdAt: number;
  expiresAt: number;
}

/** What a backend does for Tokens: each call one transaction (or one read), deciding by the rules below. */
export interface TokensSql {
  /** The clock the backend stamps rows with. */
  now(): number;
  /** Insert a family and its pairing code's hash. */
  createPairing(family: NewPairing): Promise<void>;
  /** usablePairing(), spend the code, insert mintPair()'s rows. */
  redeemPairing(hash: string, lifetimes: AuthLifetimes): Promise<TokenPair>;
  /**
   * usableRefresh(); spend it and insert mintPair()'s rows (sealing the
   * pair under the token for `graceMs` when > 0); if it was spent already,
   * the sealed pair while its window lasts, else revoke the family (REUSED).
   */
  rotate(
    refreshToken: string,
    hash: string,
    lifetimes: AuthLifetimes,
    graceMs: number,
  ): Promise<RotateOutcome>;
  findToken(hash: string, kind: TokenKind): Promise<TokenRow | undefined>;
  /** Revoke the family if it is not, dropping its sealed rotations; whether it did. */
  revokeFamily(familyId: string, reason: string): Promise<boolean>;
  /** By creation time. */
  families(): Promise<TokenFamily[]>;
  /** Spent refresh tokens of the family. */
  rotations(familyId: string): Promise<number>;
}

const PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** Why a family is revoked when a spent refresh token comes back. */
export const REUSED = "a rotated refresh token was presented again (possible theft)";

/**
 * The audit row of a family revoked because a spent refresh token came back
 * (REUSED): inserted in the revoking transaction, so the revoke and its
 * record commit together. The actor is whoever presented the family's token,
 * through this process.
 */
export function reuseAuditRow(familyId: string, at: number): AuditRow {
  return auditRow(
    {
      action: "token.revoke",
      actor: { kind: "token", id: familyId, via: localActor().via },
      targets: [familyId],
      detail: { reason: "reuse" },
    },
    at,
  );
}

/** SHA-256 of a token: the only form a token is stored in. */
export function hashToken(token: string): string {
  return nodeCrypto().createHash("sha256").update(token).digest("hex");
}

/** A new access and refresh token for the family (of scope `scope`), valid from `now`. */
export function mintPair(
  familyId: string,
  scope: TokenScope,
  lifetimes: AuthLifetimes,
  now: number,
): MintedPair {
  const accessToken = `hat_${nodeCrypto().randomBytes(32).toString("base64url")}`;
  const refreshToken = `hrt_${nodeCrypto().randomBytes(32).toString("base64url")}`;
  return {
    pair: {
      accessToken,
      refreshToken,
      expiresIn: Math.floor(lifetimes.accessMs / 1000),
      familyId,
      scope,
    },
    rows: [
      { hash: hashToken(accessToken), kind: "access", expiresAt: now + lifetimes.accessMs },
      { hash: hashToken(refreshToken), kind: "refresh", expiresAt: now + lifetimes.refreshMs },
    ],
  };
}

/** The pairing code's row if it may be redeemed at `now`, else HEARTH_UNAUTHORIZED. */
export function usablePairing(row: TokenRow | undefined, now: number): TokenRow {
  if (!row || row.usedAt !== null || row.revokedAt !== null || row.expiresAt <= now)
    throw unauthorized("the pairing code is unknown, used or expired");
  return row;
}

/** The refresh token's row if it is known, unrevoked and unexpired (spent or not), else HEARTH_UNAUTHORIZED. */
export function usableRefresh(row: TokenRow | undefined, now: number): TokenRow {
  if (!row || row.revokedAt !== null || row.expiresAt <= now)
    throw unauthorized("the refresh token is unknown, revoked or expired");
  return row;
}

/** A spent refresh token presented again: the pair its rotation shared, or a replay (revoke the family). */
export function replayOutcome(shared: TokenPair | undefined, familyId: string): RotateOutcome {
  return shared ? { kind: "rotated", pair: shared } : { kind: "reused", familyId };
}

export function unauthorized(message: string): HearthError {
  return new HearthError("HEARTH_UNAUTHORIZED", message, {
    hint: "pair again: hearth token create",
  });
}

function normalizeCode(code: string): string {
  return String(code)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "");
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
  constructor(private readonly sql: TokensSql) {}

  /**
   * A new family with a one-time pairing code (returned once, stored
   * hashed), of `scope` (DEFAULT_SCOPE, chat, when not named).
   * `allProfiles` only for the operator's dashboard login link.
   */
  async createPairing(options: {
    label?: string;
    ttlMs: number;
    scope?: TokenScope;
    allProfiles?: boolean;
  }): Promise<{ code: string; familyId: string; expiresAt: number; scope: TokenScope }> {
    const code = Array.from(
      { length: 10 },
      () => PAIRING_ALPHABET[nodeCrypto().randomInt(PAIRING_ALPHABET.length)],
    ).join("");
    const familyId = nodeCrypto().randomUUID();
    const now = this.sql.now();
    const expiresAt = now + options.ttlMs;
    const scope = options.scope ?? DEFAULT_SCOPE;
    await this.sql.createPairing({
      id: familyId,
      label: options.label ?? null,
      codeHash: hashToken(normalizeCode(code)),
      createdAt: now,
      expiresAt,
      scope,
      allProfiles: options.allProfiles === true,
    });
    return { code, familyId, expiresAt, scope };
  }

  /** Redeem a pairing code once for the family's first token pair. */
  async redeemPairing(code: string, lifetimes: AuthLifetimes): Promise<TokenPair> {
    return this.sql.redeemPairing(hashToken(normalizeCode(code)), lifetimes);
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
    return this.sql.rotate(refreshToken, hashToken(refreshToken), lifetimes, options.graceMs ?? 0);
  }

  /** The family (and its grant) of a valid access token, or a HEARTH_UNAUTHORIZED error. */
  async verifyAccess(accessToken: string): Promise<{ familyId: string } & TokenGrant> {
    const row = await this.sql.findToken(hashToken(accessToken), "access");
    if (!row || row.revokedAt !== null || row.expiresAt <= this.sql.now())
      throw unauthorized("the access token is unknown, revoked or expired");
    return { familyId: row.familyId, scope: row.scope, allProfiles: row.allProfiles };
  }

  async revokeFamily(familyId: string, reason: string): Promise<boolean> {
    return this.sql.revokeFamily(familyId, reason);
  }

  /** Families with their state, for `hearth token list`. */
  async families(): Promise<TokenFamily[]> {
    return this.sql.families();
  }

  /** How many refresh rotations a family has seen (tests and audits). */
  async rotations(familyId: string): Promise<number> {
    return this.sql.rotations(familyId);
  }
}

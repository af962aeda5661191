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
  unauthorized,
  usablePairing,
  usableRefresh,
} from "../tokens.js";
import { insertAudit } from "./audit.js";
import { int, num, refuseNul } from "./convert.js";
import type { PgClient, PgDb } from "./pool.js";

/**
 * The token statements on PostgreSQL (../tokens.ts decides), hashes only.
 * Spending a code or a refresh token is one conditional UPDATE on
 * `used_at IS NULL`: of two hosts presenting one token at once, the second
 * UPDATE waits for the first to commit and finds the token spent. Unless
 * the rotation's pair is still shared (below), that is a replay, exactly as
 * the second of two serialized SQLite transactions would be, and the
 * family is revoked.
 *
 * Single flight across hosts: a rotation asked with `graceMs` stores its new
 * pair sealed under the presented token (../rotation-seal.ts) in
 * auth_rotations, in the same transaction as the spend. A host presenting
 * the spent token within the window opens the seal and answers the same
 * pair; after it, or without the token, it is a replay as before.
 */
export class PgTokens implements TokensSql {
  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  async createPairing(f: NewPairing): Promise<void> {
    refuseNul("label", f.label);
    await this.db.transaction("create a pairing code", async (client) => {
      await client.query(
        "INSERT INTO auth_families (id, label, created_at, scope, all_profiles) VALUES ($1, $2, $3, $4, $5)",
        [f.id, f.label, f.createdAt, f.scope, f.allProfiles ? 1 : 0],
      );
      await client.query(
        "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES ($1, $2, 'pairing', $3, $4)",
        [f.codeHash, f.id, f.createdAt, f.expiresAt],
      );
    });
  }

  async redeemPairing(hash: string, lifetimes: AuthLifetimes): Promise<TokenPair> {
    return this.db.transaction("redeem a pairing code", async (client) => {
      const found = await findToken(on(client), hash, "pairing");
      const now = Date.now();
      const row = usablePairing(found, now);
      if (!(await spend(client, hash, now)))
        throw unauthorized("the pairing code is unknown, used or expired");
      return issue(client, row.familyId, row.scope, lifetimes);
    });
  }

  async rotate(
    refreshToken: string,
    hash: string,
    lifetimes: AuthLifetimes,
    graceMs: number,
  ): Promise<RotateOutcome> {
    return this.db.transaction("rotate a refresh token", async (client) => {
      const found = await findToken(on(client), hash, "refresh");
      const now = Date.now();
      const row = usableRefresh(found, now);
      if (row.usedAt === null && (await spend(client, hash, now))) {
        const pair = await issue(client, row.familyId, row.scope, lifetimes);
        if (graceMs > 0) {
          // Committed with the spend: a host whose spend waited on ours sees it.
          await client.query("DELETE FROM auth_rotations WHERE expires_at <= $1", [now]);
          await client.query(
            `INSERT INTO auth_rotations (hash, family_id, sealed, expires_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (hash) DO UPDATE SET family_id = excluded.family_id, sealed = excluded.sealed,
               expires_at = excluded.expires_at`,
            [hash, row.familyId, sealPair(refreshToken, hash, pair), now + graceMs],
          );
        }
        return { kind: "rotated", pair } as const;
      }
      // Spent before we looked, or by a concurrent rotation (on any host) since.
      // Within that rotation's grace window its presenter gets the same pair.
      const outcome = replayOutcome(
        await sharedPair(client, refreshToken, hash, now),
        row.familyId,
      );
      if (outcome.kind === "reused" && (await revokeOn(client, row.familyId, REUSED)))
        await insertAudit(client, reuseAuditRow(row.familyId, now));
      return outcome;
    });
  }

  async findToken(hash: string, kind: TokenKind): Promise<TokenRow | undefined> {
    return findToken(
      (text, params) => this.db.query("verify an access token", text, params),
      hash,
      kind,
    );
  }

  async revokeFamily(familyId: string, reason: string): Promise<boolean> {
    refuseNul("reason", reason);
    return this.db.transaction("revoke a token family", (client) =>
      revokeOn(client, familyId, reason),
    );
  }

  async families(): Promise<TokenFamily[]> {
    const { rows } = await this.db.query(
      "list token families",
      "SELECT id, label, created_at, revoked_at, revoked_reason, scope, all_profiles FROM auth_families ORDER BY created_at",
    );
    return rows.map((r) => ({
      id: r.id as string,
      label: r.label as string | null,
      createdAt: int(r.created_at),
      revokedAt: num(r.revoked_at),
      revokedReason: r.revoked_reason as string | null,
      scope: scopeOf(r.scope),
      allProfiles: int(r.all_profiles) === 1,
    }));
  }

  async rotations(familyId: string): Promise<number> {
    const { rows } = await this.db.query(
      "count rotations",
      "SELECT count(*) AS n FROM auth_tokens WHERE family_id = $1 AND kind = 'refresh' AND used_at IS NOT NULL",
      [familyId],
    );
    return int(rows[0]?.n);
  }
}

type Query = (text: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** A query on a transaction's client. */
const on =
  (client: PgClient): Query =>
  (text, params) =>
    client.query(text, params);

async function findToken(
  query: Query,
  hash: string,
  kind: TokenKind,
): Promise<TokenRow | undefined> {
  const { rows } = await query(
    `SELECT t.family_id, t.expires_at, t.used_at, f.revoked_at, f.scope, f.all_profiles
     FROM auth_tokens t JOIN auth_families f ON f.id = t.family_id WHERE t.hash = $1 AND t.kind = $2`,
    [hash, kind],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    familyId: r.family_id as string,
    expiresAt: int(r.expires_at),
    usedAt: num(r.used_at),
    revokedAt: num(r.revoked_at),
    scope: scopeOf(r.scope),
    allProfiles: int(r.all_profiles) === 1,
  };
}

/**
 * Mark a token used, only if nobody did: the single-flight step. A
 * concurrent spender's UPDATE holds the row; this one waits for it to
 * commit and then finds `used_at` set (false).
 */
async function spend(client: PgClient, hash: string, now: number): Promise<boolean> {
  const { rowCount } = await client.query(
    "UPDATE auth_tokens SET used_at = $1 WHERE hash = $2 AND used_at IS NULL",
    [now, hash],
  );
  return rowCount === 1;
}

async function issue(
  client: PgClient,
  familyId: string,
  scope: TokenScope,
  lifetimes: AuthLifetimes,
): Promise<TokenPair> {
  const now = Date.now();
  const { pair, rows } = mintPair(familyId, scope, lifetimes, now);
  const [access, refresh] = rows as [(typeof rows)[0], (typeof rows)[0]];
  await client.query(
    `INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at)
     VALUES ($1, $2, 'access', $3, $4), ($5, $2, 'refresh', $3, $6)`,
    [access.hash, familyId, now, access.expiresAt, refresh.hash, refresh.expiresAt],
  );
  return pair;
}

/** The pair a rotation of this token sealed, while its grace window lasts. */
async function sharedPair(
  client: PgClient,
  refreshToken: string,
  hash: string,
  now: number,
): Promise<TokenPair | undefined> {
  const { rows } = await client.query(
    `SELECT r.sealed FROM auth_rotations r JOIN auth_families f ON f.id = r.family_id
      WHERE r.hash = $1 AND r.expires_at > $2 AND f.revoked_at IS NULL`,
    [hash, now],
  );
  const sealed = rows[0]?.sealed as Buffer | undefined;
  return sealed ? openPair(refreshToken, hash, sealed) : undefined;
}

async function revokeOn(client: PgClient, familyId: string, reason: string): Promise<boolean> {
  await client.query("DELETE FROM auth_rotations WHERE family_id = $1", [familyId]);
  const { rowCount } = await client.query(
    "UPDATE auth_families SET revoked_at = $1, revoked_reason = $2 WHERE id = $3 AND revoked_at IS NULL",
    [Date.now(), reason, familyId],
  );
  return rowCount === 1;
}

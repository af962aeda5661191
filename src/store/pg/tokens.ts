import { randomBytes, randomInt, randomUUID } from "node:crypto";
import { HearthError } from "../../errors.js";
import type { Public } from "../public.js";
import { openPair, sealPair } from "../rotation-seal.js";
import {
  type AuthLifetimes,
  hashToken,
  type RotateOptions,
  type RotateOutcome,
  type TokenPair,
  type Tokens,
} from "../sqlite/tokens.js";
import { int, num, refuseNul } from "./convert.js";
import type { PgClient, PgDb } from "./pool.js";

const PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/**
 * Remote sessions (D6) on PostgreSQL: the same pairing codes, access tokens
 * and rotating refresh tokens as ../tokens.ts, hashes only. Spending a code
 * or a refresh token is one conditional UPDATE on `used_at IS NULL`: of two
 * hosts presenting one token at once, the second UPDATE waits for the first
 * to commit and finds the token spent. Unless the rotation's pair is still
 * shared (below), that is a replay, exactly as the second of two serialized
 * SQLite transactions would be, and the family is revoked.
 *
 * Single flight across hosts: a rotation asked with `graceMs` stores its new
 * pair sealed under the presented token (../rotation-seal.ts) in
 * auth_rotations, in the same transaction as the spend. A host presenting
 * the spent token within the window opens the seal and answers the same
 * pair; after it, or without the token, it is a replay as before.
 */
export class PgTokens implements Public<Tokens> {
  constructor(private readonly db: PgDb) {}

  async createPairing(options: {
    label?: string;
    ttlMs: number;
  }): Promise<{ code: string; familyId: string; expiresAt: number }> {
    refuseNul("label", options.label);
    const code = Array.from(
      { length: 10 },
      () => PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)],
    ).join("");
    const familyId = randomUUID();
    const now = Date.now();
    const expiresAt = now + options.ttlMs;
    await this.db.transaction("create a pairing code", async (client) => {
      await client.query("INSERT INTO auth_families (id, label, created_at) VALUES ($1, $2, $3)", [
        familyId,
        options.label ?? null,
        now,
      ]);
      await client.query(
        "INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at) VALUES ($1, $2, 'pairing', $3, $4)",
        [hashToken(normalizeCode(code)), familyId, now, expiresAt],
      );
    });
    return { code, familyId, expiresAt };
  }

  async redeemPairing(code: string, lifetimes: AuthLifetimes): Promise<TokenPair> {
    const hash = hashToken(normalizeCode(code));
    return this.db.transaction("redeem a pairing code", async (client) => {
      const row = await findToken(on(client), hash, "pairing");
      const now = Date.now();
      if (!row || row.usedAt !== null || row.revokedAt !== null || row.expiresAt <= now)
        throw unauthorized("the pairing code is unknown, used or expired");
      if (!(await spend(client, hash, now)))
        throw unauthorized("the pairing code is unknown, used or expired");
      return issue(client, row.familyId, lifetimes);
    });
  }

  async rotate(
    refreshToken: string,
    lifetimes: AuthLifetimes,
    options: RotateOptions = {},
  ): Promise<RotateOutcome> {
    const hash = hashToken(refreshToken);
    return this.db.transaction("rotate a refresh token", async (client) => {
      const row = await findToken(on(client), hash, "refresh");
      const now = Date.now();
      if (!row || row.revokedAt !== null || row.expiresAt <= now)
        throw unauthorized("the refresh token is unknown, revoked or expired");
      if (row.usedAt === null && (await spend(client, hash, now))) {
        const pair = await issue(client, row.familyId, lifetimes);
        const graceMs = options.graceMs ?? 0;
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
      const shared = await sharedPair(client, refreshToken, hash, now);
      if (shared) return { kind: "rotated", pair: shared } as const;
      await revokeOn(
        client,
        row.familyId,
        "a rotated refresh token was presented again (possible theft)",
      );
      return { kind: "reused", familyId: row.familyId } as const;
    });
  }

  async verifyAccess(accessToken: string): Promise<{ familyId: string }> {
    const row = await findToken(
      (text, params) => this.db.query("verify an access token", text, params),
      hashToken(accessToken),
      "access",
    );
    if (!row || row.revokedAt !== null || row.expiresAt <= Date.now())
      throw unauthorized("the access token is unknown, revoked or expired");
    return { familyId: row.familyId };
  }

  async revokeFamily(familyId: string, reason: string): Promise<boolean> {
    refuseNul("reason", reason);
    return this.db.transaction("revoke a token family", (client) =>
      revokeOn(client, familyId, reason),
    );
  }

  async families(): Promise<
    {
      id: string;
      label: string | null;
      createdAt: number;
      revokedAt: number | null;
      revokedReason: string | null;
    }[]
  > {
    const { rows } = await this.db.query(
      "list token families",
      "SELECT id, label, created_at, revoked_at, revoked_reason FROM auth_families ORDER BY created_at",
    );
    return rows.map((r) => ({
      id: r.id as string,
      label: r.label as string | null,
      createdAt: int(r.created_at),
      revokedAt: num(r.revoked_at),
      revokedReason: r.revoked_reason as string | null,
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

interface TokenRow {
  familyId: string;
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
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
  kind: "pairing" | "access" | "refresh",
): Promise<TokenRow | undefined> {
  const { rows } = await query(
    `SELECT t.family_id, t.expires_at, t.used_at, f.revoked_at
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
  lifetimes: AuthLifetimes,
): Promise<TokenPair> {
  const now = Date.now();
  const accessToken = `hat_${randomBytes(32).toString("base64url")}`;
  const refreshToken = `hrt_${randomBytes(32).toString("base64url")}`;
  await client.query(
    `INSERT INTO auth_tokens (hash, family_id, kind, created_at, expires_at)
     VALUES ($1, $2, 'access', $3, $4), ($5, $2, 'refresh', $3, $6)`,
    [
      hashToken(accessToken),
      familyId,
      now,
      now + lifetimes.accessMs,
      hashToken(refreshToken),
      now + lifetimes.refreshMs,
    ],
  );
  return {
    accessToken,
    refreshToken,
    expiresIn: Math.floor(lifetimes.accessMs / 1000),
    familyId,
  };
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

import { describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/tokens.js";
import { rejection } from "./errors.js";
import { backends } from "./pg-modules.js";

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 };

describe.each(backends)("tokens (D6) on $name", (backend) => {
  it("trades a one-time pairing code (any case, any separators) for a pair, once", async () => {
    const m = await backend.open();
    const before = Date.now();
    const created = await m.tokens.createPairing({ label: "phone", ttlMs: 60_000 });
    expect(created.code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{10}$/);
    expect(created.expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    const spelled = `${created.code.slice(0, 5).toLowerCase()}-${created.code.slice(5)}`;
    const pair = await m.tokens.redeemPairing(spelled, LIFETIMES);
    expect(pair.familyId).toBe(created.familyId);
    expect(pair.accessToken).toMatch(/^hat_[A-Za-z0-9_-]{43}$/);
    expect(pair.refreshToken).toMatch(/^hrt_[A-Za-z0-9_-]{43}$/);
    expect(pair.expiresIn).toBe(60);
    expect(await m.tokens.verifyAccess(pair.accessToken)).toEqual({
      familyId: created.familyId,
      scope: "chat",
      allProfiles: false,
    });
    const again = await rejection(m.tokens.redeemPairing(created.code, LIFETIMES));
    expect(again.code).toBe("HEARTH_UNAUTHORIZED");
    const families = await m.tokens.families();
    expect(families).toEqual([
      {
        id: created.familyId,
        label: "phone",
        createdAt: expect.any(Number),
        revokedAt: null,
        revokedReason: null,
        scope: "chat",
        allProfiles: false,
      },
    ]);
    expect(families[0]!.createdAt).toBeGreaterThanOrEqual(before);
  });

  it("refuses unknown, expired and revoked codes and tokens with HEARTH_UNAUTHORIZED", async () => {
    const m = await backend.open();
    const expired = await m.tokens.createPairing({ ttlMs: 0 });
    expect((await rejection(m.tokens.redeemPairing(expired.code, LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect((await rejection(m.tokens.redeemPairing("AAAAAAAAAA", LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect((await rejection(m.tokens.verifyAccess("hat_nope"))).code).toBe("HEARTH_UNAUTHORIZED");
    expect((await rejection(m.tokens.rotate("hrt_nope", LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    // An access token is not a refresh token, nor the other way round.
    const { code } = await m.tokens.createPairing({ ttlMs: 60_000 });
    const pair = await m.tokens.redeemPairing(code, LIFETIMES);
    expect((await rejection(m.tokens.rotate(pair.accessToken, LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect((await rejection(m.tokens.verifyAccess(pair.refreshToken))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    // Expired access and refresh tokens.
    const short = await m.tokens.redeemPairing(
      (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
      { accessMs: 0, refreshMs: 0 },
    );
    expect((await rejection(m.tokens.verifyAccess(short.accessToken))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect((await rejection(m.tokens.rotate(short.refreshToken, LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    // Revoked: every token of the family.
    expect(await m.tokens.revokeFamily(pair.familyId, "lost phone")).toBe(true);
    expect(await m.tokens.revokeFamily(pair.familyId, "again")).toBe(false);
    expect((await rejection(m.tokens.verifyAccess(pair.accessToken))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect((await rejection(m.tokens.rotate(pair.refreshToken, LIFETIMES))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    const family = (await m.tokens.families()).find((f) => f.id === pair.familyId);
    expect(family).toMatchObject({ revokedReason: "lost phone", revokedAt: expect.any(Number) });
    expect(await m.tokens.rotations(pair.familyId)).toBe(0);
  });

  it("rotates a refresh token once; presenting it again is a replay that revokes the family", async () => {
    const m = await backend.open();
    const first = await m.tokens.redeemPairing(
      (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
      LIFETIMES,
    );
    const rotated = await m.tokens.rotate(first.refreshToken, LIFETIMES);
    if (rotated.kind !== "rotated") throw new Error(`expected a rotation, got ${rotated.kind}`);
    const second = rotated.pair;
    expect(second.familyId).toBe(first.familyId);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(await m.tokens.verifyAccess(second.accessToken)).toMatchObject({
      familyId: first.familyId,
    });
    // The old access token lives out its lifetime (only the refresh token is spent).
    expect(await m.tokens.verifyAccess(first.accessToken)).toMatchObject({
      familyId: first.familyId,
    });
    expect(await m.tokens.rotations(first.familyId)).toBe(1);
    const third = await m.tokens.rotate(second.refreshToken, LIFETIMES);
    expect(third.kind).toBe("rotated");
    expect(await m.tokens.rotations(first.familyId)).toBe(2);

    expect(await m.tokens.rotate(first.refreshToken, LIFETIMES)).toEqual({
      kind: "reused",
      familyId: first.familyId,
    });
    const family = (await m.tokens.families()).find((f) => f.id === first.familyId);
    expect(family?.revokedReason).toBe(
      "a rotated refresh token was presented again (possible theft)",
    );
    expect((await rejection(m.tokens.verifyAccess(second.accessToken))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    if (third.kind === "rotated")
      expect((await rejection(m.tokens.rotate(third.pair.refreshToken, LIFETIMES))).code).toBe(
        "HEARTH_UNAUTHORIZED",
      );
    expect(await m.tokens.rotations(first.familyId)).toBe(2);
  });

  it("concurrent rotations of one token on two connections: one rotation, the others replays", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    const pair = await m.tokens.redeemPairing(
      (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
      LIFETIMES,
    );
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? other : m).tokens.rotate(pair.refreshToken, LIFETIMES),
      ),
    );
    const outcomes = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value.kind] : []));
    expect(outcomes.filter((k) => k === "rotated")).toHaveLength(1);
    // A replay revokes the family: a caller that comes after the revocation is refused instead.
    expect(outcomes.filter((k) => k === "reused").length).toBeGreaterThanOrEqual(1);
    for (const s of settled)
      if (s.status === "rejected")
        expect((s.reason as { code?: string }).code).toBe("HEARTH_UNAUTHORIZED");
    expect(await m.tokens.rotations(pair.familyId)).toBe(1);
    expect((await m.tokens.families())[0]?.revokedAt).toEqual(expect.any(Number));
  });

  it("with graceMs, concurrent and later presenters of one token on two connections get the same pair; after the window it is a replay", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    const first = await m.tokens.redeemPairing(
      (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
      LIFETIMES,
    );
    const graceMs = 2000;
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? other : m).tokens.rotate(first.refreshToken, LIFETIMES, { graceMs }),
      ),
    );
    const rotatedAt = Date.now();
    const pair = outcomes[0]?.kind === "rotated" ? outcomes[0].pair : undefined;
    expect(pair?.familyId).toBe(first.familyId);
    for (const o of outcomes) expect(o).toEqual({ kind: "rotated", pair });
    // A later presenter on the other connection, inside the window: the same pair again.
    expect(await other.tokens.rotate(first.refreshToken, LIFETIMES, { graceMs })).toEqual({
      kind: "rotated",
      pair,
    });
    expect(await m.tokens.rotations(first.familyId)).toBe(1);
    expect((await m.tokens.families())[0]?.revokedAt).toBeNull();
    expect(await other.tokens.verifyAccess(pair!.accessToken)).toMatchObject({
      familyId: first.familyId,
    });
    // A real wait: what is under test is the end of the window.
    await new Promise((r) => setTimeout(r, Math.max(0, rotatedAt + graceMs + 100 - Date.now())));
    expect(await other.tokens.rotate(first.refreshToken, LIFETIMES, { graceMs })).toEqual({
      kind: "reused",
      familyId: first.familyId,
    });
    expect((await rejection(m.tokens.verifyAccess(pair!.accessToken))).code).toBe(
      "HEARTH_UNAUTHORIZED",
    );
    expect(await m.tokens.rotations(first.familyId)).toBe(1);
  });

  it("a sealed rotation is shared only while its family stands", async () => {
    const m = await backend.open();
    const first = await m.tokens.redeemPairing(
      (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
      LIFETIMES,
    );
    const rotated = await m.tokens.rotate(first.refreshToken, LIFETIMES, { graceMs: 60_000 });
    expect(rotated.kind).toBe("rotated");
    expect(await m.tokens.revokeFamily(first.familyId, "lost phone")).toBe(true);
    expect(
      (await rejection(m.tokens.rotate(first.refreshToken, LIFETIMES, { graceMs: 60_000 }))).code,
    ).toBe("HEARTH_UNAUTHORIZED");
  });

  it("one redemption of a pairing code among concurrent ones on two connections", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    const { code, familyId } = await m.tokens.createPairing({ ttlMs: 60_000 });
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? other : m).tokens.redeemPairing(code, LIFETIMES),
      ),
    );
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    for (const s of settled)
      if (s.status === "rejected")
        expect((s.reason as { code?: string }).code).toBe("HEARTH_UNAUTHORIZED");
    expect((await m.tokens.families()).find((f) => f.id === familyId)?.revokedAt).toBeNull();
  });

  it("exports only hashes: hashToken is SHA-256 hex", () => {
    expect(hashToken("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});

import { describe, expect, it } from "vitest";
import { requireScope, scopeAllows, TOKEN_SCOPES } from "../../src/store/token-scopes.js";
import { rejection } from "./errors.js";
import { backends } from "./pg-modules.js";

const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 };

describe.each(backends)("token scopes (least privilege) on $name", (backend) => {
  it("a family keeps the scope it was made with: pairing, access, rotation, list", async () => {
    const m = await backend.open();
    for (const scope of TOKEN_SCOPES) {
      const created = await m.tokens.createPairing({ ttlMs: 60_000, scope, label: scope });
      expect(created.scope).toBe(scope);
      const pair = await m.tokens.redeemPairing(created.code, LIFETIMES);
      expect(pair.scope).toBe(scope);
      expect(await m.tokens.verifyAccess(pair.accessToken)).toEqual({
        familyId: created.familyId,
        scope,
        allProfiles: false,
      });
      // Rotation keeps the scope, with and without the grace window.
      const rotated = await m.tokens.rotate(pair.refreshToken, LIFETIMES, { graceMs: 60_000 });
      if (rotated.kind !== "rotated") throw new Error(`expected a rotation, got ${rotated.kind}`);
      expect(rotated.pair.scope).toBe(scope);
      expect((await m.tokens.verifyAccess(rotated.pair.accessToken)).scope).toBe(scope);
      const shared = await m.tokens.rotate(pair.refreshToken, LIFETIMES, { graceMs: 60_000 });
      expect(shared).toEqual(rotated);
    }
    const listed = await m.tokens.families();
    expect(listed.map((f) => [f.label, f.scope, f.allProfiles])).toEqual([
      ["read", "read", false],
      ["chat", "chat", false],
      ["admin", "admin", false],
    ]);
  });

  it("without a scope a family is chat; only a family minted so reaches all profiles", async () => {
    const m = await backend.open();
    const plain = await m.tokens.createPairing({ ttlMs: 60_000 });
    expect(plain.scope).toBe("chat");
    const operator = await m.tokens.createPairing({
      ttlMs: 60_000,
      scope: "admin",
      allProfiles: true,
    });
    const pair = await m.tokens.redeemPairing(operator.code, LIFETIMES);
    expect(await m.tokens.verifyAccess(pair.accessToken)).toEqual({
      familyId: operator.familyId,
      scope: "admin",
      allProfiles: true,
    });
    const other = await m.reopen();
    expect((await other.tokens.families()).map((f) => [f.scope, f.allProfiles])).toEqual([
      ["chat", false],
      ["admin", true],
    ]);
  });

  it("the store refuses a scope it does not know (CHECK): nothing is written", async () => {
    const m = await backend.open();
    await rejection(m.tokens.createPairing({ ttlMs: 60_000, scope: "root" as never }));
    expect(await m.tokens.families()).toEqual([]);
  });
});

describe("scope rules", () => {
  it("admin implies chat implies read, never the other way", () => {
    expect(scopeAllows("admin", "read")).toBe(true);
    expect(scopeAllows("admin", "chat")).toBe(true);
    expect(scopeAllows("chat", "read")).toBe(true);
    expect(scopeAllows("chat", "admin")).toBe(false);
    expect(scopeAllows("read", "chat")).toBe(false);
    let error: unknown;
    try {
      requireScope("read", "chat", "POST /v1/messages");
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({
      code: "HEARTH_SCOPE_DENIED",
      details: { needed: "chat", scope: "read" },
    });
    expect((error as Error).message).toBe(
      "POST /v1/messages needs scope chat; this token's scope is read",
    );
  });
});

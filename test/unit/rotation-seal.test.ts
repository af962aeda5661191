import { describe, expect, it } from "vitest";
import { openPair, sealPair } from "../../src/store/rotation-seal.js";
import { hashToken, type TokenPair } from "../../src/store/tokens.js";

const token = "hrt_presented-old-refresh-token-aaaaaaaaaaaaaaaaaaaaaaa";
const pair: TokenPair = {
  accessToken: "hat_new-access-token-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
  refreshToken: "hrt_new-refresh-token-ccccccccccccccccccccccccccccccccc",
  expiresIn: 900,
  familyId: "f-1",
  scope: "chat",
};

describe("sealed rotation results (D6 across hosts)", () => {
  it("opens only with the presented token, for the row it was sealed for", () => {
    const sealed = sealPair(token, hashToken(token), pair);
    expect(openPair(token, hashToken(token), sealed)).toEqual(pair);
    // What the database holds (hash and ciphertext) names no token in clear.
    const bytes = sealed.toString("latin1");
    for (const secret of [token, pair.accessToken, pair.refreshToken])
      expect(bytes).not.toContain(secret);
    expect(sealed.toString("latin1")).not.toContain("hat_");
    // Another token, or the hash alone used as a token, does not open it.
    expect(openPair(`${token}x`, hashToken(token), sealed)).toBeUndefined();
    expect(openPair(hashToken(token), hashToken(token), sealed)).toBeUndefined();
    // Moved to another row (different associated data): refused.
    expect(openPair(token, hashToken("other"), sealed)).toBeUndefined();
    // Tampered, truncated or of an unknown version: refused, never thrown.
    for (const at of [0, 5, 20, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[at] = bad[at]! ^ 1;
      expect(openPair(token, hashToken(token), bad)).toBeUndefined();
    }
    expect(openPair(token, hashToken(token), sealed.subarray(0, 20))).toBeUndefined();
    // A fresh nonce each time: sealing twice gives different bytes.
    expect(sealPair(token, hashToken(token), pair).equals(sealed)).toBe(false);
  });
});

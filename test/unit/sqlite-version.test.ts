import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasWalResetBug, parseVersion } from "../../src/store/sqlite/sqlite-version.js";

describe("parseVersion", () => {
  it("reads major, minor and patch", () => {
    expect(parseVersion("3.51.3")).toEqual([3, 51, 3]);
    expect(parseVersion("3.7.0")).toEqual([3, 7, 0]);
    expect(parseVersion("10.200.3000")).toEqual([10, 200, 3000]);
  });

  it.each([
    "",
    "garbage",
    "3",
    "3.51",
    "v3.51.3",
    "3.x.1",
    " 3.51.3",
  ])("throws RangeError on %j", (text) => {
    expect(() => parseVersion(text)).toThrow(RangeError);
    expect(() => parseVersion(text)).toThrow(/not a SQLite version/);
  });
});

describe("hasWalResetBug", () => {
  it.each([
    ["3.6.23", false],
    ["3.6.23.1", false],
    ["3.7.0", true],
    ["3.7.17", true],
    ["3.44.5", true],
    ["3.44.6", false],
    ["3.50.6", true],
    ["3.50.7", false],
    ["3.51.0", true],
    ["3.51.2", true],
    ["3.51.3", false],
    ["3.52.0", false],
    ["3.53.2", false],
  ])("%s → %s", (version, expected) => {
    expect(hasWalResetBug(version)).toBe(expected);
  });

  it("is false for every version from 3.51.3 on", () => {
    const fixed = fc.oneof(
      fc.nat(1_000).map((patch) => [3, 51, 3 + patch] as const),
      fc.tuple(fc.constant(3), fc.integer({ min: 52, max: 999 }), fc.nat(999)),
      fc.tuple(fc.integer({ min: 4, max: 99 }), fc.nat(999), fc.nat(999)),
    );
    fc.assert(
      fc.property(fixed, ([major, minor, patch]) => {
        expect(hasWalResetBug(`${major}.${minor}.${patch}`)).toBe(false);
      }),
    );
  });

  it("is true for every 3.7.0 – 3.51.2 release except the fixed 3.44.6+ and 3.50.7+ patches", () => {
    const affected = fc
      .tuple(fc.integer({ min: 7, max: 51 }), fc.nat(999))
      .filter(([minor, patch]) => minor < 51 || patch <= 2)
      .filter(([minor, patch]) => !(minor === 44 && patch >= 6) && !(minor === 50 && patch >= 7));
    fc.assert(
      fc.property(affected, ([minor, patch]) => {
        expect(hasWalResetBug(`3.${minor}.${patch}`)).toBe(true);
      }),
    );
  });

  it("treats later patches on the backport lines as fixed", () => {
    expect(hasWalResetBug("3.44.7")).toBe(false);
    expect(hasWalResetBug("3.50.9")).toBe(false);
    expect(hasWalResetBug("3.44.5")).toBe(true);
  });

  it("propagates the RangeError for garbage", () => {
    expect(() => hasWalResetBug("unknown")).toThrow(RangeError);
  });
});

import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  configPath,
  databasePath,
  profileDir,
  resolveHome,
  resolveLocation,
  validateProfile,
} from "../../src/config/paths.js";
import { HearthError } from "../../src/errors.js";

const HOME = "/home/me/.hearth";

function profileError(name: string): HearthError {
  try {
    validateProfile(name);
  } catch (err) {
    expect(err).toBeInstanceOf(HearthError);
    return err as HearthError;
  }
  throw new Error(`expected profile ${JSON.stringify(name)} to be rejected`);
}

describe("validateProfile", () => {
  it.each(["default", "work", "a", "0", "my-agent_2", "x".repeat(64)])("accepts %j", (name) => {
    expect(validateProfile(name)).toBe(name);
  });

  it.each([
    "../x",
    "",
    "A",
    "x".repeat(65),
    "-x",
    "_x",
    "a/b",
    "a b",
    ".",
    "..",
    "Work",
    "wörk",
    "a\n",
  ])("rejects %j with HEARTH_PROFILE_INVALID", (name) => {
    const err = profileError(name);
    expect(err.code).toBe("HEARTH_PROFILE_INVALID");
    expect(err.resource).toBe(name);
    expect(err.message).toContain(JSON.stringify(name));
  });

  it("never lets an accepted name leave the profiles directory", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (name) => {
        let accepted = true;
        try {
          validateProfile(name);
        } catch {
          accepted = false;
        }
        if (!accepted) return;
        expect(databasePath(HOME, name)).toBe(
          name === "default" ? join(HOME, "state.db") : join(HOME, "profiles", name, "state.db"),
        );
        expect(name).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
      }),
    );
  });
});

describe("paths", () => {
  it("puts the default profile's database in the home itself", () => {
    expect(databasePath(HOME, "default")).toBe("/home/me/.hearth/state.db");
    expect(profileDir(HOME, "default")).toBe(HOME);
  });

  it("puts other profiles under profiles/<name>", () => {
    expect(databasePath(HOME, "work")).toBe("/home/me/.hearth/profiles/work/state.db");
    expect(profileDir(HOME, "work")).toBe("/home/me/.hearth/profiles/work");
  });

  it("validates the profile before building a path", () => {
    expect(() => databasePath(HOME, "../../etc")).toThrow(HearthError);
  });

  it("keeps config.json in the home", () => {
    expect(configPath(HOME)).toBe("/home/me/.hearth/config.json");
  });

  it("resolves the home from the argument, then HEARTH_HOME, always absolute", () => {
    expect(resolveHome("/srv/hearth", { HEARTH_HOME: "/elsewhere" })).toBe("/srv/hearth");
    expect(resolveHome(undefined, { HEARTH_HOME: "/elsewhere" })).toBe("/elsewhere");
    expect(resolveHome("rel/home", {})).toBe(join(process.cwd(), "rel/home"));
    expect(resolveHome(undefined, {})).toMatch(/\/\.hearth$/);
  });
});

describe("resolveLocation: the one way home and profile are resolved", () => {
  it("prefers the option, then HEARTH_HOME / HEARTH_PROFILE, then the defaults", () => {
    const env = { HEARTH_HOME: "/srv/h", HEARTH_PROFILE: "work" };
    expect(resolveLocation({}, env)).toEqual({ home: "/srv/h", profile: "work" });
    expect(resolveLocation({ home: "/x", profile: "b" }, env)).toEqual({
      home: "/x",
      profile: "b",
    });
    expect(resolveLocation({}, { HEARTH_PROFILE: "" }).profile).toBe("default");
    expect(() => resolveLocation({}, { HEARTH_PROFILE: "../etc" })).toThrow(
      expect.objectContaining({ code: "HEARTH_PROFILE_INVALID" }),
    );
  });
});

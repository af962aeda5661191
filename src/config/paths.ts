import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { HearthError } from "../errors.js";

export const DEFAULT_PROFILE = "default";
/** A profile name, as a JSON-schema pattern (HTTP validation) and as a RegExp. */
export const PROFILE_PATTERN = "^[a-z0-9][a-z0-9_-]{0,63}$";
const PROFILE_NAME = new RegExp(PROFILE_PATTERN);

/** True when `profile` is an allowed profile name. */
export function isProfileName(profile: unknown): profile is string {
  return typeof profile === "string" && PROFILE_NAME.test(profile);
}

/** `$HEARTH_HOME`, else `~/.hearth`, always absolute. */
export function resolveHome(home?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = home ?? env.HEARTH_HOME ?? join(homedir(), ".hearth");
  return isAbsolute(chosen) ? chosen : resolve(chosen);
}

export interface Location {
  home: string;
  profile: string;
}

/**
 * Home and profile, resolved the one way every part of hearth resolves them
 * (CLI, library, gateway, maintenance): the explicit value, else
 * `$HEARTH_HOME` / `$HEARTH_PROFILE`, else `~/.hearth` and `default`. The
 * home is absolute and the profile validated.
 */
export function resolveLocation(
  options: { home?: string | undefined; profile?: string | undefined } = {},
  env: NodeJS.ProcessEnv = process.env,
): Location {
  return {
    home: resolveHome(options.home, env),
    profile: validateProfile(chosenProfile(options.profile, env) ?? DEFAULT_PROFILE),
  };
}

/** The profile someone chose (the option, else `$HEARTH_PROFILE`), or undefined when nobody did. */
export function chosenProfile(
  profile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const chosen = profile ?? env.HEARTH_PROFILE;
  return chosen === undefined || chosen === "" ? undefined : validateProfile(chosen);
}

export function validateProfile(profile: string): string {
  if (!PROFILE_NAME.test(profile)) {
    throw new HearthError(
      "HEARTH_PROFILE_INVALID",
      `profile name ${JSON.stringify(profile)} is not allowed: use 1–64 lowercase letters, digits, "-" or "_", starting with a letter or digit`,
      { resource: profile, hint: "hearth --profile work doctor" },
    );
  }
  return profile;
}

/** The directory holding a profile's database: the home itself for `default`. */
export function profileDir(home: string, profile: string): string {
  validateProfile(profile);
  return profile === DEFAULT_PROFILE ? home : join(home, "profiles", profile);
}

export function databasePath(home: string, profile: string): string {
  return join(profileDir(home, profile), "state.db");
}

export function configPath(home: string): string {
  return join(home, "config.json");
}

export function backupsDir(home: string): string {
  return join(home, "backups");
}

import type { ProfileStores } from "../profiles.js";

/** The profiles a request reads: the one it names (HEARTH_NOT_FOUND when not served, HEARTH_PROFILE_DENIED when its login may not), else every one the login sees. */
export function profilesOf(stores: ProfileStores, profile: string | undefined): string[] {
  return profile ? [stores.reader(profile).profile] : stores.profiles;
}

import type { ProfileStores } from "../profiles.js";

export interface SessionRoutesDeps {
  stores: ProfileStores;
}

/** The profiles a request reads: the one it names (HEARTH_NOT_FOUND when not served), else every served one. */
export function profilesOf(stores: ProfileStores, profile: string | undefined): string[] {
  return profile ? [stores.reader(profile).profile] : stores.profiles;
}

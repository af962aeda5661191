import type { HearthConfig } from "../config/schema.js";
import type { Store } from "../store/api.js";

/**
 * The local operator's one-time login token: a pairing code of the
 * profile's token families (issue 5), labelled "dashboard login", valid
 * dashboard.loginLinkMinutes, minted `admin` and marked all-profiles, so
 * its browser sees and manages every profile the dashboard serves. Only
 * someone who can write the home (and so read every profile's files
 * anyway) mints one: `hearth dashboard link`, or `dashboard run` at start.
 * A pairing code from `hearth token create` logs a browser in as well, for
 * its own profile and scope only (docs/security.md).
 */
export async function createLoginToken(
  stores: { withWriter<T>(profile: string, fn: (store: Store) => Promise<T>): Promise<T> },
  profile: string,
  config: HearthConfig,
): Promise<{ code: string; expiresAt: number }> {
  return stores.withWriter(profile, (store) =>
    store.tokens.createPairing({
      label: "dashboard login",
      ttlMs: config.dashboard.loginLinkMinutes * 60_000,
      scope: "admin",
      allProfiles: true,
    }),
  );
}

export function loginLink(address: string, code: string): string {
  return `${address}/login?token=${encodeURIComponent(code)}`;
}

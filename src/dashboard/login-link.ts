import type { HearthConfig } from "../config/schema.js";
import type { Store } from "../store/api.js";

/**
 * A one-time login token: a pairing code of the profile's token families
 * (issue 5), labelled "dashboard login", valid dashboard.loginLinkMinutes.
 * Any pairing code from `hearth token create` logs a browser in as well.
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
    }),
  );
}

export function loginLink(address: string, code: string): string {
  return `${address}/login?token=${encodeURIComponent(code)}`;
}

/**
 * The store URL, checked and masked, without loading the PostgreSQL driver:
 * configuration loading checks `store.url` on every start, SQLite or not.
 */
import { HearthError } from "../../errors.js";
import { maskSecrets } from "../../mask-secrets.js";

/** The URL with its password (user info, `password=` parameter) replaced by `***`, for messages and logs. */
export function maskUrl(url: string): string {
  return maskSecrets(url);
}

/** The passwords `url` carries (user info, `password=` parameters), decoded: what a message must not quote. */
export function urlPasswords(url: string): string[] {
  try {
    const u = new URL(url);
    const found = [...u.searchParams]
      .filter(([key]) => key.toLowerCase() === "password")
      .map(([, value]) => value);
    if (u.password) found.push(decodeURIComponent(u.password));
    return found.filter((p) => p !== "");
  } catch {
    return [];
  }
}

/** Refuse anything but a postgres:// URL naming a host and a database. */
export function parseStoreUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    throw badUrl(url, "it is not a URL", err);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:")
    throw badUrl(url, `its scheme is ${u.protocol.replace(/:$/, "")}, not postgres`);
  if (!u.hostname && !u.searchParams.get("host")) throw badUrl(url, "it names no host");
  if (u.pathname.replace(/^\//, "") === "") throw badUrl(url, "it names no database");
  return u;
}

function badUrl(url: string, why: string, cause?: unknown): HearthError {
  return new HearthError("HEARTH_STORE_URL_INVALID", `store URL ${maskUrl(url)}: ${why}`, {
    resource: maskUrl(url),
    hint: "use postgres://user:password@host:5432/database",
    cause,
  });
}

import { HearthError } from "../errors.js";

/**
 * What a token family may do (least privilege), stored with the family and
 * kept by every rotation: `read` (list, get, search, export), `chat` (send
 * messages, run turns; implies read), `admin` (rename, delete, archive,
 * prune, maintenance; implies chat and read). Families made before scopes
 * existed are `admin`, so nothing that worked stops working.
 */
export const TOKEN_SCOPES = ["read", "chat", "admin"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** What `hearth token create` gives without --scope: a remote client reads and chats. */
export const DEFAULT_SCOPE: TokenScope = "chat";

/** What a family carries beside its tokens: its scope, and whether it reaches every profile. */
export interface TokenGrant {
  scope: TokenScope;
  /**
   * Only the local operator's own dashboard login link (`hearth dashboard
   * link`, the link `dashboard run` prints) is minted with this: its
   * browser sees every profile the dashboard serves. Every other family is
   * good for its own profile only.
   */
  allProfiles: boolean;
}

export function isScope(value: unknown): value is TokenScope {
  return typeof value === "string" && (TOKEN_SCOPES as readonly string[]).includes(value);
}

/** A scope read back from a row: anything else is refused (fails closed), never widened. */
export function scopeOf(value: unknown): TokenScope {
  if (isScope(value)) return value;
  throw new HearthError("HEARTH_INTERNAL", `a token family has an unknown scope ${String(value)}`);
}

/** Whether a family of scope `have` may do what needs `need`. */
export function scopeAllows(have: TokenScope, need: TokenScope): boolean {
  return TOKEN_SCOPES.indexOf(have) >= TOKEN_SCOPES.indexOf(need);
}

/** Refuse with HEARTH_SCOPE_DENIED (403) unless `have` covers `need`. */
export function requireScope(have: TokenScope, need: TokenScope, what: string): void {
  if (scopeAllows(have, need)) return;
  throw new HearthError(
    "HEARTH_SCOPE_DENIED",
    `${what} needs scope ${need}; this token's scope is ${have}`,
    {
      hint: `pair a client with enough scope: hearth token create --scope ${need}`,
      details: { needed: need, scope: have },
    },
  );
}

/** The 403 for a token or login of one profile used for another (which one it belongs to is not said). */
export function profileDenied(
  profile: string,
  what: "access token" | "dashboard login",
): HearthError {
  return new HearthError(
    "HEARTH_PROFILE_DENIED",
    `this ${what} belongs to another profile: it is not good for profile ${JSON.stringify(profile)}`,
    {
      hint:
        what === "access token"
          ? "name the token's own profile (?profile=NAME), or pair a client for this one: hearth --profile NAME token create"
          : "log in with a link of that profile: hearth --profile NAME token create, or the operator's hearth dashboard link",
    },
  );
}

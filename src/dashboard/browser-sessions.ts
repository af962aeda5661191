import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { TokenGrant, TokenScope } from "../store/token-scopes.js";

export interface BrowserSession {
  /** The synchronizer token every change must carry in `x-csrf-token`. */
  readonly csrf: string;
  /** The token family the login link belonged to (issue 5's families). */
  readonly familyId: string;
  /** The profile whose token made the login: the only one it sees unless `allProfiles`. */
  readonly profile: string;
  /** What the login may do (the family's scope). */
  readonly scope: TokenScope;
  /** The operator's own link: every served profile. */
  readonly allProfiles: boolean;
  readonly createdAt: number;
  lastSeenAt: number;
}

/**
 * Logged-in browsers, held in memory only: the cookie carries a random
 * 256-bit id, the map is keyed by its SHA-256, and a restart logs everyone
 * out (`hearth dashboard link` prints a fresh login link). A session ends
 * after `idleMs` without a request.
 */
export class BrowserSessions {
  private readonly sessions = new Map<string, BrowserSession>();

  constructor(private readonly idleMs: number) {}

  create(
    familyId: string,
    profile: string,
    grant: TokenGrant,
  ): { id: string; session: BrowserSession } {
    const id = randomBytes(32).toString("base64url");
    const now = Date.now();
    const session: BrowserSession = {
      csrf: randomBytes(32).toString("base64url"),
      familyId,
      profile,
      scope: grant.scope,
      allProfiles: grant.allProfiles,
      createdAt: now,
      lastSeenAt: now,
    };
    this.sweep(now);
    this.sessions.set(digest(id), session);
    return { id, session };
  }

  /** The live session for a cookie value, touched; undefined for none, unknown or idle. */
  get(id: string | undefined): BrowserSession | undefined {
    if (!id) return undefined;
    const key = digest(id);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    const now = Date.now();
    if (now - session.lastSeenAt > this.idleMs) {
      this.sessions.delete(key);
      return undefined;
    }
    session.lastSeenAt = now;
    return session;
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(digest(id));
  }

  private sweep(now: number): void {
    for (const [key, s] of this.sessions)
      if (now - s.lastSeenAt > this.idleMs) this.sessions.delete(key);
  }
}

/** Constant-time comparison of two tokens. */
export function sameToken(a: string | undefined, b: string): boolean {
  if (typeof a !== "string") return false;
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
}

function digest(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type BrowserLoginGrant, csrfFor } from "../store/browser-logins.js";
import type { TokenScope } from "../store/token-scopes.js";

export interface BrowserSession {
  /** The synchronizer token every change must carry in `x-csrf-token` (derived from the cookie id). */
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
 * Where a dashboard keeps its logged-in browsers: in memory (MemorySessions,
 * one host: SQLite), or in the store (./stored-sessions.ts, PostgreSQL: every
 * dashboard of the database accepts the cookie). The cookie carries a random
 * 256-bit id; only its SHA-256 is kept.
 */
export interface BrowserSessions {
  create(login: BrowserLoginGrant): Promise<{ id: string; session: BrowserSession }>;
  /** The live session for a cookie value, touched; undefined for none, unknown, idle or ended. */
  get(id: string | undefined): Promise<BrowserSession | undefined>;
  end(id: string | undefined): Promise<void>;
}

/**
 * Logged-in browsers held in memory only: the map is keyed by the id's
 * SHA-256, and a restart logs everyone out (`hearth dashboard link` prints a
 * fresh login link). A session ends after `idleMs` without a request.
 */
export class MemorySessions implements BrowserSessions {
  private readonly sessions = new Map<string, BrowserSession>();

  constructor(private readonly idleMs: number) {}

  async create(login: BrowserLoginGrant): Promise<{ id: string; session: BrowserSession }> {
    const id = randomBytes(32).toString("base64url");
    const now = Date.now();
    const session: BrowserSession = {
      csrf: csrfFor(id),
      familyId: login.familyId,
      profile: login.profile,
      scope: login.scope,
      allProfiles: login.allProfiles,
      createdAt: now,
      lastSeenAt: now,
    };
    this.sweep(now);
    this.sessions.set(digest(id), session);
    return { id, session };
  }

  async get(id: string | undefined): Promise<BrowserSession | undefined> {
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

  async end(id: string | undefined): Promise<void> {
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

import { type BrowserLogin, TOUCH_EVERY_MS } from "../store/browser-logins.js";
import type { BrowserSession, BrowserSessions } from "./browser-sessions.js";
import type { ProfileStores } from "./profiles.js";

/**
 * Logged-in browsers kept in the served profiles' stores (store.browserLogins):
 * on PostgreSQL every dashboard of the database, on any host, accepts a
 * cookie another issued, and a logout or a revoked token family is refused
 * everywhere at once. A login lives in its own profile's store; a cookie is
 * looked up in each served profile's (read-only) store. Writes (login,
 * logout, the idle expiry moved on at most once a minute) go through a
 * writer opened for them.
 */
export class StoredSessions implements BrowserSessions {
  constructor(
    private readonly stores: ProfileStores,
    private readonly idleMs: number,
  ) {}

  async create(login: Parameters<BrowserSessions["create"]>[0]) {
    const made = await this.stores.withWriter(login.profile, (store) =>
      store.browserLogins.create(login, this.idleMs),
    );
    return { id: made.id, session: session(made.login) };
  }

  async get(id: string | undefined): Promise<BrowserSession | undefined> {
    const found = id ? await this.find(id) : undefined;
    if (!found || !id) return undefined;
    if (Date.now() - found.lastSeenAt >= TOUCH_EVERY_MS) {
      await this.stores.withWriter(found.profile, (store) =>
        store.browserLogins.touch(id, this.idleMs),
      );
    }
    return session(found);
  }

  async end(id: string | undefined): Promise<void> {
    const found = id ? await this.find(id) : undefined;
    if (!found || !id) return;
    await this.stores.withWriter(found.profile, (store) => store.browserLogins.end(id));
  }

  private async find(id: string): Promise<BrowserLogin | undefined> {
    if (id.length > 100) return undefined;
    for (const profile of this.stores.profiles) {
      // An error (the server unreachable) is thrown: no login, fail closed.
      const login = await this.stores.reader(profile).browserLogins.find(id);
      if (login && login.profile === profile) return login;
    }
    return undefined;
  }
}

function session(login: BrowserLogin): BrowserSession {
  return { ...login };
}

import type { Store } from "../store/api.js";
import { openStore } from "../store/open.js";
import { ProfileLock } from "./profile-lock.js";

/**
 * How the scheduler reaches each profile's store: a writer opened for one
 * piece of work and closed after (it holds no store between them), in the
 * profile's access order (ProfileLock): bookkeeping shares the profile,
 * a structural job's launch has it alone.
 */
export class ProfileAccess {
  private readonly locks: Map<string, ProfileLock>;

  constructor(
    private readonly home: string,
    profiles: string[],
  ) {
    this.locks = new Map(profiles.map((p) => [p, new ProfileLock()]));
  }

  /** Open the profile's store for `fn`, then close it; outside the access order (the caller holds its turn, or needs none). */
  async open<T>(profile: string, fn: (s: Store) => Promise<T>): Promise<T> {
    const store = await openStore({ home: this.home, profile, role: "writer" });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  /** Bookkeeping outside a launch: shares the profile with other runs. */
  shared<T>(profile: string, fn: (s: Store) => Promise<T>): Promise<T> {
    return this.turn(profile, false, () => this.open(profile, fn));
  }

  /** Run `fn` in the profile's access order: alone when `exclusive`, else beside other shared users. */
  turn<T>(profile: string, exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    return this.locks.get(profile)!.run(exclusive, fn);
  }

  /** Refuse every waiter (the scheduler is stopping); holders finish. */
  close(): void {
    for (const l of this.locks.values()) l.close();
  }
}

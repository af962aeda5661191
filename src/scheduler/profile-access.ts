import { isHearthError } from "../errors.js";
import { isSqliteStore, type Store } from "../store/api.js";
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

  /**
   * Open the profile's store for `fn`, then close it; outside the access
   * order (the caller holds its turn, or needs none). A store opened while
   * none of this process is open attaches to the current files; one opened
   * beside another (bookkeeping shares a profile) shares that one's
   * connection, so a generation change (F3: someone removed the -wal/-shm)
   * seen by `fn` reattaches it (store.reopen(), as the gateway does) before
   * the error goes to the caller: the write is not tried again (it may
   * have committed into the removed -wal, which reopen() saves), and every
   * later one lands on the current files even while others keep the
   * connection open.
   */
  async open<T>(profile: string, fn: (s: Store) => Promise<T>): Promise<T> {
    const store = await openStore({ home: this.home, profile, role: "writer" });
    try {
      return await fn(store);
    } catch (err) {
      if (isHearthError(err, "HEARTH_GENERATION_CHANGED") && isSqliteStore(store))
        await store.reopen().catch(() => undefined); // the error at hand says enough
      throw err;
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

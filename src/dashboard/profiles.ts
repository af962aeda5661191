import { HearthError, isHearthError } from "../errors.js";
import type { Store } from "../store/api.js";
import { openStore } from "../store/open.js";

/**
 * The dashboard's stores: one read-only store per served profile for every
 * read (C1), and a writer opened only for the length of one of its few
 * ordinary row writes (rename, pin, archive, hide, delete, delete-empty,
 * login), then closed. So the dashboard holds the structural gate only
 * while it writes a row, and maintenance is never refused because a
 * dashboard is open.
 */
export class ProfileStores {
  private constructor(
    readonly home: string,
    private readonly readers: Map<string, Store>,
  ) {}

  static async open(home: string, profiles: string[]): Promise<ProfileStores> {
    const readers = new Map<string, Store>();
    try {
      for (const profile of profiles) {
        if (readers.has(profile)) continue;
        readers.set(profile, await openReader(home, profile));
      }
    } catch (err) {
      for (const store of readers.values()) await store.close();
      throw err;
    }
    return new ProfileStores(home, readers);
  }

  /** The read-only stores, one per served profile. */
  get stores(): Store[] {
    return [...this.readers.values()];
  }

  get profiles(): string[] {
    return [...this.readers.keys()];
  }

  /** The read-only store of a served profile; an unknown one is HEARTH_NOT_FOUND. */
  reader(profile: string | undefined): Store {
    const store = this.readers.get(profile ?? this.profiles[0]!);
    if (!store) {
      throw new HearthError(
        "HEARTH_NOT_FOUND",
        `this dashboard does not serve profile ${JSON.stringify(profile)}`,
        { hint: `served: ${this.profiles.join(", ")}` },
      );
    }
    return store;
  }

  /** Run one ordinary write on a writer opened for it and closed after. */
  async withWriter<T>(profile: string, fn: (store: Store) => Promise<T>): Promise<T> {
    this.reader(profile);
    const store = await openStore({ home: this.home, profile });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  async close(): Promise<void> {
    for (const store of this.readers.values()) await store.close();
    this.readers.clear();
  }
}

/** The profile's read-only store; a profile nothing has written yet is created first (a new, empty store). */
async function openReader(home: string, profile: string): Promise<Store> {
  try {
    return await openStore({ home, profile, role: "reader", readerThreads: true });
  } catch (err) {
    if (!isHearthError(err, "HEARTH_STORE_NOT_FOUND")) throw err;
    await (await openStore({ home, profile })).close();
    return openStore({ home, profile, role: "reader", readerThreads: true });
  }
}

import type { FastifyRequest } from "fastify";
import { HearthError, isHearthError } from "../errors.js";
import type { Store } from "../store/api.js";
import { openStore } from "../store/open.js";
import { profileDenied } from "../store/token-scopes.js";
import { ReaderRecovery, type RecoveryLog } from "./recovery.js";

/**
 * The dashboard's stores: one read-only store per served profile for every
 * read (C1), and a writer opened only for the length of one of its few
 * ordinary row writes (rename, pin, archive, hide, delete, delete-empty,
 * login), then closed. So the dashboard holds the structural gate only
 * while it writes a row, and maintenance is never refused because a
 * dashboard is open.
 *
 * A login of one profile sees the stores through `forLogin()`: a view of
 * that profile alone, which refuses every other with HEARTH_PROFILE_DENIED
 * (403). Routes reach stores only through `storesOf(request)`.
 *
 * Every reader is kept on the current files (ReaderRecovery): the
 * dashboard's preHandler, the live feed and withWriter() reattach one whose
 * -wal/-shm were removed or replaced first.
 */
export class ProfileStores {
  private constructor(
    readonly home: string,
    private readonly readers: Map<string, Store>,
    private readonly recovery: ReaderRecovery,
    /** A view's one profile; undefined: every served profile. */
    private readonly only?: string,
  ) {}

  /** `log`: where reattachments are told (read when one happens: the server's logger comes later). */
  static async open(
    home: string,
    profiles: string[],
    log: () => RecoveryLog | undefined = () => undefined,
  ): Promise<ProfileStores> {
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
    return new ProfileStores(home, readers, new ReaderRecovery(log));
  }

  /**
   * Reattach the readers of `profiles` (default: every one of this view)
   * whose files changed under this process (F3). True when one of them is
   * off its current files or was a moment ago (ReaderRecovery): a request
   * that failed on it is worth a retry. Profiles this view does not show
   * are skipped.
   */
  reattachChanged(profiles: readonly string[] = this.profiles): Promise<boolean> {
    const shown = new Set(this.profiles);
    const stores: Store[] = [];
    for (const p of profiles) {
      const store = shown.has(p) ? this.readers.get(p) : undefined;
      if (store) stores.push(store);
    }
    return this.recovery.reattachChanged(stores);
  }

  /** The read-only stores, one per profile this view shows. */
  get stores(): Store[] {
    return this.profiles.map((p) => this.readers.get(p)!);
  }

  get profiles(): string[] {
    return this.only === undefined ? [...this.readers.keys()] : [this.only];
  }

  /**
   * What a login sees: every served profile for the operator's own link
   * (all-profiles), else its own profile alone. A profile this dashboard
   * does not serve shows nothing (no view of it is made).
   */
  forLogin(login: { profile: string; allProfiles: boolean }): ProfileStores {
    if (login.allProfiles) return this;
    return new ProfileStores(this.home, this.readers, this.recovery, login.profile);
  }

  /**
   * The read-only store of a profile this view shows; an unknown one is
   * HEARTH_NOT_FOUND, and for a one-profile view any other profile is
   * HEARTH_PROFILE_DENIED (which profiles exist is not said).
   */
  reader(profile: string | undefined): Store {
    if (this.only !== undefined && profile !== undefined && profile !== this.only)
      throw profileDenied(profile, "dashboard login");
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

  /**
   * Run one ordinary write on a writer opened for it and closed after. It
   * shares the reader's connection to the database (one per process), so
   * that is reattached first when its files changed; a write refused by the
   * generation guard all the same (they changed meanwhile) is not tried
   * again (it may have committed into the removed -wal, which the reattach
   * saves), but the next one is served on the current files.
   */
  async withWriter<T>(profile: string, fn: (store: Store) => Promise<T>): Promise<T> {
    const reader = this.reader(profile);
    await this.recovery.reattachChanged([reader]);
    const store = await openStore({ home: this.home, profile });
    try {
      return await fn(store);
    } catch (err) {
      if (isHearthError(err, "HEARTH_GENERATION_CHANGED"))
        await this.recovery.reattachChanged([reader]);
      throw err;
    } finally {
      await store.close();
    }
  }

  async close(): Promise<void> {
    if (this.only !== undefined) return; // a view: its owner closes the stores
    for (const store of this.readers.values()) await store.close();
    this.readers.clear();
  }
}

declare module "fastify" {
  interface FastifyRequest {
    /** The stores this request's login may see (set for every logged-in request). */
    stores?: ProfileStores;
  }
}

/** The stores a logged-in request may see; none without a login (fails closed). */
export function storesOf(request: FastifyRequest): ProfileStores {
  if (!request.stores) {
    throw new HearthError("HEARTH_UNAUTHORIZED", "log in to the dashboard first", {
      hint: "hearth dashboard link   # prints a one-time login link",
    });
  }
  return request.stores;
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

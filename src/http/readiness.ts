/**
 * Liveness and readiness for the HTTP processes (H3). Liveness is "the
 * process answers"; readiness is "a write would succeed now": every served
 * store reachable (PostgreSQL: one real round trip, bounded by a short
 * timeout), not parked for a maintenance window, the process not draining,
 * and room on the disk of a SQLite store. The answer is cached for a
 * second, so a balancer polling every few hundred milliseconds costs one
 * round trip a second, and a round trip still unanswered is never doubled.
 */
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { type HearthErrorCode, isHearthError } from "../errors.js";
import { isSqliteStore, type Store } from "../store/api.js";

/** Seconds a client waits after a PostgreSQL outage answer: a restarting server takes a few. */
export const PG_RETRY_AFTER_SECONDS = 5;
/** How long a readiness answer is reused. */
export const READY_CACHE_MS = 1_000;
/** How long a PostgreSQL round trip may take before the store counts as unreachable. */
export const READY_TIMEOUT_MS = 2_000;
/** Free bytes a SQLite store's filesystem needs to count as writable. */
export const READY_MIN_FREE_BYTES = 16 * 1024 * 1024;

/** True for the codes of a PostgreSQL server that is not there for us right now. */
export function isPgOutage(code: string): boolean {
  return code === "HEARTH_PG_UNAVAILABLE" || code === "HEARTH_PG_TOO_MANY_CONNECTIONS";
}

export interface ReadyReason {
  code: HearthErrorCode;
  /** Says what is wrong without a path, a URL or a profile name (S1). */
  message: string;
  /** The profile it is about; shown to callers allowed to see profile names. */
  profile?: string;
}

export interface ReadyReport {
  status: "ready" | "not ready";
  reasons: ReadyReason[];
  /** Per served store: whether its round trip (or its file checks) passed. */
  stores: { profile: string; backend: Store["backend"]; reachable: boolean }[];
}

/**
 * A store as readiness sees it when the process does not hold it open (the
 * scheduler opens its stores for each piece of work): a SQLite store's
 * free space is read on `path`'s filesystem; a PostgreSQL store answers
 * `roundTrip`.
 */
export interface ReadyTarget {
  profile: string;
  backend: Store["backend"];
  /** SQLite: the database's path (its folder's filesystem is the one measured). */
  path?: string;
  /** PostgreSQL: one real round trip to the server. */
  roundTrip?: () => Promise<unknown>;
  closed?: boolean;
  parked?: boolean;
  /** The same object at every check: a round trip in flight is reused through it. */
  key: object;
}

export interface ReadinessOptions {
  /** The stores served now (re-read at every check: a store may be reopened). */
  stores?: () => Iterable<Store>;
  /** Stores the process reaches without holding them open (re-read at every check). */
  targets?: () => Iterable<ReadyTarget>;
  /** True while the process drains (it finishes what it holds and takes nothing new). */
  draining?: () => boolean;
  timeoutMs?: number;
  cacheMs?: number;
  minFreeBytes?: number;
}

export class Readiness {
  private cached: { at: number; report: Promise<ReadyReport> } | undefined;
  /** A PostgreSQL round trip still in flight, per store: reused, never doubled. */
  private readonly inFlight = new WeakMap<object, Promise<unknown>>();

  constructor(private readonly options: ReadinessOptions) {}

  private settled: ReadyReport | undefined;

  /** The current answer, at most cacheMs old. */
  check(): Promise<ReadyReport> {
    const now = Date.now();
    const cacheMs = this.options.cacheMs ?? READY_CACHE_MS;
    if (this.cached && now - this.cached.at < cacheMs) return this.cached.report;
    const report = this.measure();
    report.then(
      (r) => {
        this.settled = r;
      },
      () => undefined,
    );
    this.cached = { at: now, report };
    return report;
  }

  /**
   * The last finished answer, at once (undefined before the first), and a
   * new check started when it is stale: what /v1/health shows as
   * information. Liveness never waits on a store (a PostgreSQL round trip
   * that hangs would make a balancer restart a healthy process).
   */
  latest(): ReadyReport | undefined {
    void this.check();
    return this.settled;
  }

  private async measure(): Promise<ReadyReport> {
    const reasons: ReadyReason[] = [];
    const stores: ReadyReport["stores"] = [];
    if (this.options.draining?.())
      reasons.push({
        code: "HEARTH_DRAINING",
        message: "the process is shutting down: it finishes what it holds and takes nothing new",
      });
    const list = [
      ...[...(this.options.stores?.() ?? [])].map(storeTarget),
      ...(this.options.targets?.() ?? []),
    ];
    const found = await Promise.all(list.map((store) => this.storeReasons(store)));
    list.forEach((store, i) => {
      const own = found[i]!.map((r) => ({ ...r, profile: store.profile }));
      reasons.push(...own);
      stores.push({ profile: store.profile, backend: store.backend, reachable: own.length === 0 });
    });
    return { status: reasons.length === 0 ? "ready" : "not ready", reasons, stores };
  }

  private async storeReasons(store: ReadyTarget): Promise<Omit<ReadyReason, "profile">[]> {
    if (store.closed) return [{ code: "HEARTH_STORE_CLOSED", message: "a served store is closed" }];
    if (store.roundTrip) return this.roundTrip(store, store.roundTrip);
    const out: Omit<ReadyReason, "profile">[] = [];
    if (store.parked)
      out.push({
        code: "HEARTH_MAINTENANCE_RUNNING",
        message: "a store is parked for a maintenance window",
      });
    const min = this.options.minFreeBytes ?? READY_MIN_FREE_BYTES;
    let free = -1;
    try {
      if (store.path !== undefined) {
        const fs = statfsSync(dirname(store.path));
        free = fs.bavail * fs.bsize;
      }
    } catch {
      // unreadable free space counts as none (fail closed)
    }
    if (!(free >= min))
      out.push({
        code: "HEARTH_NO_SPACE",
        message: `the disk of a store has ${free < 0 ? "unreadable" : `${free} bytes of`} free space (less than ${min})`,
      });
    return out;
  }

  /** One real round trip to the server, bounded by timeoutMs. */
  private async roundTrip(
    target: ReadyTarget,
    trip: () => Promise<unknown>,
  ): Promise<Omit<ReadyReason, "profile">[]> {
    const timeoutMs = this.options.timeoutMs ?? READY_TIMEOUT_MS;
    let call = this.inFlight.get(target.key);
    if (!call) {
      call = trip().finally(() => this.inFlight.delete(target.key));
      call.catch(() => undefined);
      this.inFlight.set(target.key, call);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    try {
      if ((await Promise.race([call, late])) === "late")
        return [
          {
            code: "HEARTH_PG_UNAVAILABLE",
            message: `the PostgreSQL server did not answer a round trip within ${timeoutMs} ms`,
          },
        ];
      return [];
    } catch (err) {
      const code = isHearthError(err) ? err.code : "HEARTH_PG_UNAVAILABLE";
      return [
        {
          code,
          message: isPgOutage(code)
            ? `the PostgreSQL server is not reachable (${code})`
            : `the PostgreSQL server refused a round trip (${code})`,
        },
      ];
    } finally {
      clearTimeout(timer);
    }
  }
}

/** What readiness checks of a store this process holds open. */
function storeTarget(store: Store): ReadyTarget {
  const base = { profile: store.profile, backend: store.backend, key: store };
  if (store.isClosed) return { ...base, closed: true };
  if (!isSqliteStore(store)) return { ...base, roundTrip: () => store.schema() };
  return { ...base, path: store.path, parked: store.isParked };
}

/**
 * The body and status of GET /v1/ready: 200 `{ status: "ready", reasons: [] }`
 * or 503 with `Retry-After` and the reasons; profile names only for
 * callers allowed to see them.
 */
export async function readyAnswer(
  readiness: Readiness,
  showProfiles: boolean,
): Promise<{ status: number; retryAfter?: number; body: Pick<ReadyReport, "status" | "reasons"> }> {
  const report = await readiness.check();
  const reasons = report.reasons.map(({ profile, ...r }) =>
    showProfiles && profile !== undefined ? { ...r, profile } : r,
  );
  if (report.status === "ready") return { status: 200, body: { status: "ready", reasons } };
  const pg = reasons.some((r) => isPgOutage(r.code));
  return {
    status: 503,
    retryAfter: pg ? PG_RETRY_AFTER_SECONDS : 1,
    body: { status: "not ready", reasons },
  };
}

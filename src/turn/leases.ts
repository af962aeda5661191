import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { HearthError, isHearthError } from "../errors.js";
import { currentIdentity, liveness, type ProcessIdentity } from "../process/identity.js";
import { processKind } from "../process/kind.js";
import type { Store } from "../store/api.js";
import type { MetaCas, MetaPresence } from "../store/meta.js";
import type { StopSignal } from "./stop.js";

interface LeaseRecord {
  holder: ProcessIdentity;
  kind: string;
  /** One turn: two turns of the same process exclude each other too. */
  turnId: string;
  expiresAt: number;
  /**
   * The machine the holder runs on (hostname and machine id). Absent in
   * leases written before several hosts could share a store (PostgreSQL):
   * those are taken to be this machine's.
   */
  host?: string;
  /**
   * The holder's presence owner: unique to one start of one process (a
   * cloned machine's process with the same hostname, machine id and pid
   * has another). Where the store's server holds presence (PostgreSQL) it
   * alone says whether the holder is alive. Absent in older leases.
   */
  owner?: string;
}

/** When a refused turn is worth trying again (a 409's Retry-After). */
const BUSY_RETRY_SECONDS = 1;

/** This process's presence owner in the leases it takes (a new one at every start). */
const OWNER = `turn:${randomUUID()}`;

/** The presence of turn leases: this process claims as OWNER; a lease names its holder's. */
export const leasePresence: MetaPresence = {
  claims: OWNER,
  ownerOf: (value) => {
    const owner = parse(value)?.owner;
    return typeof owner === "string" ? owner : undefined;
  },
};

let machine: string | undefined;
/** This machine: its hostname and /etc/machine-id (when readable). */
export function thisHost(): string {
  if (machine === undefined) {
    let id = "";
    try {
      id = readFileSync("/etc/machine-id", "utf8").trim();
    } catch {
      // No machine id (some containers): the hostname alone.
    }
    machine = id ? `${hostname()}/${id}` : hostname();
  }
  return machine;
}

/** What a turn knows about its own lease. */
export interface Turn {
  sessionId: string;
  turnId: string;
  key: string;
}

export const leaseKey = (sessionId: string) => `turn-lease:${sessionId}`;

/**
 * One agent turn per session at a time, across processes (gateway, hearth
 * chat) and within one. A lease is a row in `meta`, written by
 * compare-and-set inside a write transaction; it names its holder's
 * identity (P1) and turn, and is taken over only when that holder is
 * provably dead or the lease expired. The gateway folds the acquire into the
 * transaction that stores the inbound message and the release into the one
 * that stores the reply, so a turn costs no extra commit.
 */
export function newTurn(sessionId: string): Turn {
  return { sessionId, turnId: randomUUID(), key: leaseKey(sessionId) };
}

/**
 * The compare-and-set that takes the lease, or throws HEARTH_TURN_BUSY
 * naming the holder. `ownerAlive` is the store server's word on the
 * holder's presence (PostgreSQL, see MetaPresence): when given, it alone
 * decides whether the holder lives, on whatever host; a dead owner's lease
 * is free at once. Without it (SQLite, a lease naming no owner) a holder on
 * this machine is looked up in /proc, and one on another machine holds the
 * lease until it expires. A live holder's lease expires after `leaseMs`
 * either way.
 */
export function acquireDecider(
  turn: Turn,
  leaseMs: number,
  options: AcquireOptions = {},
): (current: string | null, ownerAlive?: boolean) => string {
  const me = currentIdentity() ?? { pid: process.pid, startTicks: -1, bootId: "unknown" };
  return (current, ownerAlive) => {
    const lease = current ? parse(current) : undefined;
    // A holder on another machine cannot be looked up in this one's /proc
    // (its boot id differs, which here would read as "dead").
    const elsewhere = lease?.host !== undefined && lease.host !== thisHost();
    const now = Date.now();
    // One look at the holder (the server's word, /proc, or the expiry elsewhere) decides both.
    const other = lease !== undefined && lease.turnId !== turn.turnId;
    const gone = other && holderGone(lease, now, ownerAlive);
    if (options.refuseOrphan && gone) throw orphanedLease(turn.sessionId);
    if (lease && other && !gone && now < lease.expiresAt) {
      throw new HearthError(
        "HEARTH_TURN_BUSY",
        `session ${turn.sessionId} is in a turn of pid ${lease.holder.pid} (${lease.kind})${elsewhere ? ` on ${lease.host}` : ""}`,
        {
          resource: turn.sessionId,
          hint: `retry when that turn is done (Retry-After: ${BUSY_RETRY_SECONDS} s)`,
          details: { retryAfterSeconds: BUSY_RETRY_SECONDS },
        },
      );
    }
    const next: LeaseRecord = {
      holder: me,
      kind: processKind(),
      turnId: turn.turnId,
      expiresAt: Date.now() + leaseMs,
      host: thisHost(),
      owner: OWNER,
    };
    return JSON.stringify(next);
  };
}

export interface AcquireOptions {
  /**
   * Do not take over the lease of a turn a crash interrupted: throw
   * HEARTH_TURN_INTERRUPTED instead, so that the caller finishes that turn first. A
   * released lease (the normal case) costs nothing extra.
   */
  refuseOrphan?: boolean;
}

/**
 * A lease held by a turn a crash interrupted, found by a decider told to
 * refuse it (HEARTH_TURN_INTERRUPTED: the turn that meets it finishes the
 * interrupted one first; it never reaches a client).
 */
function orphanedLease(sessionId: string): HearthError {
  return new HearthError(
    "HEARTH_TURN_INTERRUPTED",
    `session ${sessionId} holds the lease of a turn a crash interrupted`,
    { resource: sessionId, hint: "finish that turn first (resumeTurn), then take the lease" },
  );
}

/** The lease-taking change for an append to carry (metaBefore), with its presence. */
export function acquireCas(turn: Turn, leaseMs: number, options: AcquireOptions = {}): MetaCas {
  return {
    key: turn.key,
    decide: acquireDecider(turn, leaseMs, options),
    presence: leasePresence,
  };
}

/** The compare-and-set that gives the lease back, only if it is still this turn's. */
export function releaseDecider(turn: Turn): (current: string | null) => null | undefined {
  return (current) => (current && parse(current)?.turnId === turn.turnId ? null : undefined);
}

/**
 * Retry `attempt` while it fails with HEARTH_TURN_BUSY, up to `waitMs`. An
 * abort of any of `signals` while waiting ends the wait with `onAbort()`'s
 * error: nothing was stored, nothing will be (a prompt cancelled in the queue).
 */
export async function waitForTurn<T>(
  waitMs: number,
  attempt: () => Promise<T>,
  signals: readonly (StopSignal | undefined)[] = [],
  onAbort: () => Error = () => new Error("aborted"),
): Promise<T> {
  const deadline = Date.now() + waitMs;
  const live = signals.filter((s): s is StopSignal => s !== undefined);
  const aborted = () => live.some((s) => s.aborted);
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    try {
      return await attempt();
    } catch (err) {
      if (!isHearthError(err, "HEARTH_TURN_BUSY") || Date.now() >= deadline) throw err;
      if (aborted()) throw onAbort();
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const s of live) s.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(delay, Math.max(1, deadline - Date.now())));
      for (const s of live) s.addEventListener("abort", done, { once: true });
    });
    if (aborted()) throw onAbort();
  }
}

/** Take the lease in a transaction of its own (when it cannot ride along with an append). */
export async function acquireAlone(
  store: Store,
  turn: Turn,
  leaseMs: number,
  waitMs: number,
): Promise<void> {
  const decide = acquireDecider(turn, leaseMs);
  try {
    await waitForTurn(waitMs, () => store.meta.compareAndSet(turn.key, decide, leasePresence));
  } catch (err) {
    // Only HEARTH_TURN_BUSY proves the claim did not land: one whose COMMIT
    // reply was lost did. The lease is read back and given up if it is this
    // turn's (retried in the background while the store is unreachable).
    if (!isHearthError(err, "HEARTH_TURN_BUSY"))
      await releaseAlone(store, turn).catch(() =>
        releaseInBackground(store, turn, Date.now() + leaseMs),
      );
    throw err;
  }
}

/** Give the lease back in a transaction of its own (cleanup after a failure). */
export async function releaseAlone(store: Store, turn: Turn): Promise<void> {
  await store.meta.compareAndSet(turn.key, releaseDecider(turn));
}

/**
 * Keep trying to release a lease whose release failed (a full disk, a busy
 * store), every 100 ms to 2 s, until it lands, the store is closed, or the
 * lease would have expired anyway (`untilMs`). Without it, a session whose
 * reply could not be stored stays in its turn for gateway.leaseMs after
 * the cause is gone. Runs in the background; never keeps the process alive.
 */
export function releaseInBackground(
  store: Store,
  turn: Turn,
  untilMs: number,
  onDone?: (released: boolean) => void,
): void {
  let delay = 100;
  const attempt = () => {
    if (Date.now() >= untilMs) return onDone?.(false);
    releaseAlone(store, turn).then(
      () => onDone?.(true),
      (err: unknown) => {
        if (isHearthError(err, "HEARTH_STORE_CLOSED")) return onDone?.(false);
        delay = Math.min(delay * 2, 2_000);
        setTimeout(attempt, delay).unref();
      },
    );
  };
  setTimeout(attempt, delay).unref();
}

/**
 * True when the lease `value` belongs to a turn a crash interrupted. Where
 * the store's server holds presence (`alive`: owner -> alive, PostgreSQL)
 * and the lease names its owner, the server says: its owner is gone.
 * Otherwise its holder is provably dead on this machine, or (held on
 * another machine, which this one cannot inspect) the lease has expired.
 */
export function isOrphanedLease(
  value: string,
  now = Date.now(),
  alive?: ReadonlyMap<string, boolean>,
): boolean {
  const lease = parse(value);
  if (!lease) return false;
  return holderGone(lease, now, lease.owner === undefined ? undefined : alive?.get(lease.owner));
}

/**
 * Whether a lease's turn was interrupted: the server's word on its owner
 * where it has one (`ownerAlive`), else its holder provably dead on this
 * machine, or (held on another machine) expired.
 */
function holderGone(lease: LeaseRecord, now: number, ownerAlive: boolean | undefined): boolean {
  if (ownerAlive !== undefined) return !ownerAlive;
  if (lease.host !== undefined && lease.host !== thisHost()) return now >= lease.expiresAt;
  return liveness(lease.holder) === "dead";
}

function parse(value: string): LeaseRecord | undefined {
  try {
    const v = JSON.parse(value) as LeaseRecord;
    return typeof v?.holder?.pid === "number" && typeof v.turnId === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

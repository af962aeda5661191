import { HearthError } from "../errors.js";
import { currentIdentity, liveness, type ProcessIdentity } from "../process/identity.js";
import { processKind } from "../process/kind.js";
import type { Store } from "../store/store.js";

interface LeaseRecord {
  holder: ProcessIdentity;
  kind: string;
  expiresAt: number;
}

const key = (sessionId: string) => `turn-lease:${sessionId}`;

/**
 * One agent turn per session at a time, across processes (gateway, hearth
 * chat). A lease is a row in `meta` written in one IMMEDIATE transaction
 * (compare-and-set); it names its holder's identity (P1) and is taken over
 * only when that holder is provably dead or the lease expired. A second
 * turn waits up to `waitMs`, then gets HEARTH_TURN_BUSY (HTTP 409).
 */
export async function acquireTurnLease(
  store: Store,
  sessionId: string,
  options: { leaseMs: number; waitMs: number },
): Promise<() => Promise<void>> {
  const me = currentIdentity() ?? { pid: process.pid, startTicks: -1, bootId: "unknown" };
  const deadline = Date.now() + options.waitMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    const taken = await store.meta.compareAndSet(key(sessionId), (current) => {
      const lease = current ? parse(current) : undefined;
      if (
        lease &&
        !isOurs(lease, me) &&
        Date.now() < lease.expiresAt &&
        liveness(lease.holder) !== "dead"
      ) {
        return undefined; // held by a live turn
      }
      const next: LeaseRecord = {
        holder: me,
        kind: processKind(),
        expiresAt: Date.now() + options.leaseMs,
      };
      return JSON.stringify(next);
    });
    if (taken) break;
    if (Date.now() >= deadline) {
      const holder = parse((await store.meta.get(key(sessionId))) ?? "");
      throw new HearthError(
        "HEARTH_TURN_BUSY",
        `session ${sessionId} is in a turn of pid ${holder?.holder.pid ?? "?"} (${holder?.kind ?? "unknown"})`,
        { resource: sessionId, hint: "retry when that turn is done" },
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, deadline - Date.now()))));
  }
  return async () => {
    await store.meta.compareAndSet(key(sessionId), (current) => {
      const lease = current ? parse(current) : undefined;
      return lease && isOurs(lease, me) ? null : undefined;
    });
  };
}

function isOurs(lease: LeaseRecord, me: ProcessIdentity): boolean {
  return (
    lease.holder.pid === me.pid &&
    lease.holder.startTicks === me.startTicks &&
    lease.holder.bootId === me.bootId
  );
}

function parse(value: string): LeaseRecord | undefined {
  try {
    const v = JSON.parse(value) as LeaseRecord;
    return typeof v?.holder?.pid === "number" ? v : undefined;
  } catch {
    return undefined;
  }
}

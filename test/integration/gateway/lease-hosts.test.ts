import { expect, it } from "vitest";
import { isHearthError } from "../../../src/errors.js";
import { openStore } from "../../../src/index.js";
import { currentIdentity } from "../../../src/process/identity.js";
import {
  acquireAlone,
  isOrphanedLease,
  leaseKey,
  newTurn,
  thisHost,
} from "../../../src/turn/leases.js";
import { tempHome } from "../../helpers/home.js";

// With PostgreSQL several machines share one store. A lease's holder on
// another machine has another boot id, which this machine's liveness check
// reads as "dead": the lease must then stand until it expires, or two
// gateways would run turns of one session at once.
async function storeWithLease(host: string | undefined) {
  const store = await openStore({ home: tempHome() });
  const session = await store.sessions.create({ source: "test" });
  const me = currentIdentity();
  if (!me) throw new Error("no /proc identity");
  const lease = {
    holder: { pid: me.pid, startTicks: me.startTicks, bootId: "another-boot" },
    kind: "gateway",
    turnId: "held-elsewhere",
    expiresAt: Date.now() + 60_000,
    ...(host === undefined ? {} : { host }),
  };
  await store.meta.compareAndSet(leaseKey(session.id), () => JSON.stringify(lease));
  return { store, sessionId: session.id };
}

it("a lease held on another machine stands until it expires", async () => {
  const { store, sessionId } = await storeWithLease("gateway-2/0123456789abcdef");
  const err = await acquireAlone(store, newTurn(sessionId), 30_000, 0).catch((e: unknown) => e);
  expect(isHearthError(err, "HEARTH_TURN_BUSY")).toBe(true);
  expect(String((err as Error).message)).toContain("on gateway-2/0123456789abcdef");
  await store.close();
});

it("a lease held on this machine by a process of an earlier boot is taken over", async () => {
  const { store, sessionId } = await storeWithLease(thisHost());
  await acquireAlone(store, newTurn(sessionId), 30_000, 0);
  const { store: old, sessionId: oldSession } = await storeWithLease(undefined);
  await acquireAlone(old, newTurn(oldSession), 30_000, 0);
  await Promise.all([store.close(), old.close()]);
});

it("a turn held on another machine is not an orphan to resume until its lease expires", async () => {
  const lease = (host: string, expiresAt: number) =>
    JSON.stringify({
      holder: { pid: 1, startTicks: 1, bootId: "another-boot" },
      kind: "gateway",
      turnId: "t",
      expiresAt,
      host,
    });
  const now = Date.now();
  expect(isOrphanedLease(lease("gateway-2/abc", now + 60_000), now)).toBe(false);
  expect(isOrphanedLease(lease("gateway-2/abc", now - 1), now)).toBe(true);
  expect(isOrphanedLease(lease(thisHost(), now + 60_000), now)).toBe(true);
});

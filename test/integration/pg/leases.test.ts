/**
 * Turn leases on PostgreSQL: hosts racing for one session's lease get one
 * winner, and a lease held on another host is honoured until it expires
 * (its holder cannot be looked up from here).
 */
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { acquireDecider, leaseKey, newTurn } from "../../../src/turn/leases.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function open(url: string): Promise<Store> {
  const store = await openStore({ home: tempHome(), url, env: {} });
  stores.push(store);
  return store;
}

describe.skipIf(!pgEnabled)("turn leases on PostgreSQL", () => {
  it("three stores (own pools, as three hosts) racing for an absent lease: one wins every round", async () => {
    const url = await freshPgDatabase();
    const hosts = await Promise.all([1, 2, 3].map(() => open(url)));
    const session = await hosts[0]!.sessions.create();
    for (let round = 0; round < 25; round++) {
      const outcomes = await Promise.all(
        hosts.map((h) =>
          h.meta
            .compareAndSet(leaseKey(session.id), acquireDecider(newTurn(session.id), 60_000))
            .then(
              () => "won",
              (err: unknown) => (isHearthError(err, "HEARTH_TURN_BUSY") ? "busy" : String(err)),
            ),
        ),
      );
      expect(outcomes.filter((o) => o === "won")).toHaveLength(1);
      expect(outcomes.filter((o) => o === "busy")).toHaveLength(2);
      await hosts[0]!.meta.delete(leaseKey(session.id));
    }
  });

  it("a lease held on another host is alive until it expires, whatever its boot id says", async () => {
    const url = await freshPgDatabase();
    const store = await open(url);
    const session = await store.sessions.create();
    const key = leaseKey(session.id);
    const foreign = (expiresAt: number) =>
      JSON.stringify({
        holder: { pid: 4242, startTicks: 1, bootId: "another-machine's-boot-id" },
        host: `not-${hostname()}`,
        kind: "gateway",
        turnId: "their-turn",
        expiresAt,
      });
    await store.meta.set(key, foreign(Date.now() + 60_000));
    const err = await store.meta
      .compareAndSet(key, acquireDecider(newTurn(session.id), 60_000))
      .catch((e: unknown) => e);
    expect(isHearthError(err, "HEARTH_TURN_BUSY")).toBe(true);
    expect(String((err as Error).message)).toContain(`on not-${hostname()}`);
    expect(JSON.parse((await store.meta.get(key))!).turnId).toBe("their-turn");
    // Expired: taken over.
    await store.meta.set(key, foreign(Date.now() - 1));
    await store.meta.compareAndSet(key, acquireDecider(newTurn(session.id), 60_000));
    const mine = JSON.parse((await store.meta.get(key))!);
    expect(mine.host).toContain(hostname());
    expect(mine.turnId).not.toBe("their-turn");
  });
});

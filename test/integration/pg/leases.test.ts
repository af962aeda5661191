/**
 * Turn leases on PostgreSQL: hosts racing for one session's lease get one
 * winner (by compare-and-set, and by group commit), and whether a holder
 * lives is the server's word on its presence: a lease naming no presence
 * (an older one) held on another host is honoured until it expires.
 */
import { hostname } from "node:os";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { currentIdentity } from "../../../src/process/identity.js";
import {
  acquireAlone,
  acquireCas,
  acquireDecider,
  leaseKey,
  leasePresence,
  newTurn,
  thisHost,
} from "../../../src/turn/leases.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

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

  it("two stores (as two hosts) group-committing a claim of one lease at once: one wins every round", async () => {
    // decideMeta (group-append.ts) decides on values read under the keys' advisory
    // locks: without them both read "no lease" and both take it.
    const url = await freshPgDatabase();
    const hosts = await Promise.all([1, 2].map(() => open(url)));
    const session = await hosts[0]!.sessions.create();
    const key = leaseKey(session.id);
    for (let round = 0; round < 60; round++) {
      const results = await Promise.all(
        hosts.map((h, i) =>
          h.messages.appendMany([
            {
              sessionId: session.id,
              message: { role: "user", content: `round ${round} host ${i}` },
              metaBefore: acquireCas(newTurn(session.id), 60_000),
            },
          ]),
        ),
      );
      const outcomes = results.map(([r]) =>
        r?.ok ? "won" : isHearthError(r?.error, "HEARTH_TURN_BUSY") ? "busy" : String(r?.error),
      );
      expect(outcomes.sort()).toEqual(["busy", "won"]);
      await hosts[0]!.meta.delete(key);
    }
  });

  it("two hosts group-committing one meta key with messages of two sessions: one wins every round", async () => {
    // The batch's row locks are on its sessions: with two sessions only the keys'
    // advisory locks (group-append.ts LOCK_SQL) order the two reads of the key;
    // without them both read "no lease" and both take it.
    const url = await freshPgDatabase();
    const hosts = await Promise.all([1, 2].map(() => open(url)));
    const sessions = [await hosts[0]!.sessions.create(), await hosts[0]!.sessions.create()];
    const key = leaseKey(sessions[0]!.id);
    for (let round = 0; round < 60; round++) {
      const results = await Promise.all(
        hosts.map((h, i) =>
          h.messages.appendMany([
            {
              sessionId: sessions[i]!.id,
              message: { role: "user", content: `round ${round} host ${i}` },
              metaBefore: acquireCas(newTurn(sessions[0]!.id), 60_000),
            },
          ]),
        ),
      );
      const outcomes = results.map(([r]) =>
        r?.ok ? "won" : isHearthError(r?.error, "HEARTH_TURN_BUSY") ? "busy" : String(r?.error),
      );
      expect(outcomes.sort()).toEqual(["busy", "won"]);
      await hosts[0]!.meta.delete(key);
    }
  });

  it("a live local pid does not keep a lease whose presence is gone (a clone's process)", async () => {
    const url = await freshPgDatabase();
    const store = await open(url);
    const session = await store.sessions.create();
    const key = leaseKey(session.id);
    const me = currentIdentity();
    if (!me) throw new Error("no /proc identity");
    // This very process by pid, start ticks, boot id and host, as a clone's would read:
    // /proc says alive. Its presence owner is held by nobody.
    const lease = (owner: string) =>
      JSON.stringify({
        holder: me,
        host: thisHost(),
        kind: "gateway",
        turnId: "the-clone's-turn",
        expiresAt: Date.now() + 60_000,
        owner,
      });
    await store.meta.set(key, lease("turn:nobody-holds-this"));
    await store.meta.compareAndSet(key, acquireDecider(newTurn(session.id), 60_000), leasePresence);
    expect(JSON.parse((await store.meta.get(key))!).owner).toBe(leasePresence.claims);
    // A holder whose presence is held (this process's, held since the claim) keeps it.
    await store.meta.set(key, lease(leasePresence.claims));
    const err = await store.meta
      .compareAndSet(key, acquireDecider(newTurn(session.id), 60_000), leasePresence)
      .catch((e: unknown) => e);
    expect(isHearthError(err, "HEARTH_TURN_BUSY")).toBe(true);
    expect((err as { details?: { retryAfterSeconds?: number } }).details?.retryAfterSeconds).toBe(
      1,
    );
  });

  it("a lost presence connection: the owner is dead to every host until its next claim holds it again", async () => {
    const url = await freshPgDatabase();
    const store = await open(url);
    const [s1, s2] = [await store.sessions.create(), await store.sessions.create()];
    const owner = leasePresence.claims;
    const alive = async () => (await store.meta.ownersAlive([owner]))?.get(owner);
    await acquireAlone(store, newTurn(s1.id), 60_000, 0);
    expect(await alive()).toBe(true);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // The server ends the connection holding the presence (a restart, an admin, a network cut).
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(l.pid) AS ok FROM pg_locks l
         JOIN pg_stat_activity a ON a.pid = l.pid AND a.datname = current_database()
         WHERE l.locktype = 'advisory' AND l.mode = 'ShareLock' AND l.granted`,
      );
      expect(rows.filter((r) => r.ok)).toHaveLength(1);
    } finally {
      await admin.end();
    }
    await until("the presence to be gone", async () => (await alive()) === false);
    // Fail closed: meanwhile its leases are free to any host. Its next claim holds it again.
    await until("a claim to hold the presence again", async () => {
      await acquireAlone(store, newTurn(s2.id), 60_000, 0).catch(() => undefined);
      await store.meta.delete(leaseKey(s2.id));
      return (await alive()) === true;
    });
    const err = await acquireAlone(store, newTurn(s1.id), 60_000, 0).catch((e: unknown) => e);
    expect(isHearthError(err, "HEARTH_TURN_BUSY")).toBe(true);
  });

  it("ownersAlive: misuse is refused; a name no lock can have (NUL) is nobody's, an unheld one dead", async () => {
    const store = await open(await freshPgDatabase());
    const misuse = await store.meta.ownersAlive("turn:x" as never).catch((e: unknown) => e);
    expect(misuse).toBeInstanceOf(TypeError);
    expect((misuse as { code?: string }).code).toBe("HEARTH_INVALID_ARG");
    const alive = await store.meta.ownersAlive(["turn:\u0000", "turn:nobody"]);
    expect([...alive!.entries()].sort()).toEqual([
      ["turn:\u0000", false],
      ["turn:nobody", false],
    ]);
  });

  it("a closed store holds no presence and opens none for a claim", async () => {
    const url = await freshPgDatabase();
    const store = await open(url);
    const session = await store.sessions.create();
    await acquireAlone(store, newTurn(session.id), 60_000, 0);
    const holders = async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const { rows } = await admin.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE a.datname = current_database() AND l.locktype = 'advisory' AND l.mode = 'ShareLock'`,
        );
        return rows[0].n as number;
      } finally {
        await admin.end();
      }
    };
    expect(await holders()).toBe(1);
    await store.close();
    const err = await acquireAlone(store, newTurn(session.id), 60_000, 0).catch((e: unknown) => e);
    expect(isHearthError(err, "HEARTH_STORE_CLOSED")).toBe(true);
    expect(await holders()).toBe(0);
  });

  it("a lease naming no presence, held on another host, is alive until it expires", async () => {
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

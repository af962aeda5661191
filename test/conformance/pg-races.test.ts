/**
 * The cross-host guarantees of D5, D6 and H2 on PostgreSQL, with real
 * processes (each its own pool, as each host would have): two processes
 * claim one handoff at the same instant, two rotate one refresh token at
 * the same instant, two compare-and-set one meta key at the same instant.
 * A gate (an advisory lock this test holds until both processes wait on
 * it) starts each round at once in both.
 */
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { pgEnabled } from "../helpers/pg.js";
import { type Child, spawnNode, until } from "../helpers/process.js";
import { postgres } from "./pg-modules.js";

const WORKER = fileURLToPath(new URL("../fixtures/pg-race-worker.mjs", import.meta.url));
const ROUNDS = 25;
const LIFETIMES = { accessMs: 60_000, refreshMs: 600_000 };

const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()));
});

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: { code?: string; message: string };
}

class RaceWorker {
  readonly child: Child;
  private next = 1;
  constructor(url: string) {
    this.child = spawnNode([WORKER, url]);
  }
  ready(): Promise<unknown> {
    return this.child.json<{ ready?: boolean }>((v) => v.ready === true, "ready");
  }
  /** Send an op that waits at `gate` (unless `gated` is false); resolves with its reply. */
  call(op: string, gate: number, args: Record<string, unknown>, gated = true): Promise<Reply> {
    const id = this.next++;
    const reply = this.child.json<Reply>((v) => v.id === id, `the reply to ${op}`);
    reply.catch(() => undefined); // awaited by the round; a failed round must not leave it unhandled
    this.child.send({ id, op, ...(gated ? { gate } : {}), ...args });
    return reply;
  }
}

/**
 * One round: hold the gate, send `op` to every worker, wait until each is
 * blocked on the gate (pg_locks), release it; the replies.
 */
async function race(
  admin: pg.Client,
  workers: RaceWorker[],
  gate: number,
  op: string,
  args: Record<string, unknown>,
): Promise<Reply[]> {
  await admin.query("SELECT pg_advisory_lock($1)", [gate]);
  const replies = workers.map((w) => w.call(op, gate, args));
  await until(`${workers.length} processes waiting at the gate`, async () => {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid = 0 AND objid = $1`,
      [gate],
    );
    return rows[0].n === workers.length;
  });
  await admin.query("SELECT pg_advisory_unlock($1)", [gate]);
  return Promise.all(replies);
}

async function setup() {
  const m = await postgres.open();
  const { url } = m.location as { url: string };
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  clients.push(admin);
  const workers = [new RaceWorker(url), new RaceWorker(url)];
  await Promise.all(workers.map((w) => w.ready()));
  return { m, admin, workers };
}

describe.skipIf(!pgEnabled)("races across processes on PostgreSQL", () => {
  it(`two processes claim one handoff at the same instant: exactly one wins (${ROUNDS} rounds)`, async () => {
    const { m, admin, workers } = await setup();
    for (let round = 0; round < ROUNDS; round++) {
      const sid = await m.seed.session();
      expect(await m.handoffs.request(sid, "http")).toBe(true);
      const replies = await race(admin, workers, 1000 + round, "claim", {
        sessionId: sid,
        owner: `gw-${round}`,
      });
      for (const r of replies) expect(r.ok, r.error?.message).toBe(true);
      expect(replies.filter((r) => r.result === true)).toHaveLength(1);
      expect((await m.handoffs.list("running", 1000)).map((s) => s.id)).toContain(sid);
    }
  });

  it(`two processes rotate one refresh token at the same instant: one new pair, the other a replay (${ROUNDS} rounds)`, async () => {
    const { m, admin, workers } = await setup();
    for (let round = 0; round < ROUNDS; round++) {
      const pair = await m.tokens.redeemPairing(
        (await m.tokens.createPairing({ ttlMs: 60_000 })).code,
        LIFETIMES,
      );
      const replies = await race(admin, workers, 2000 + round, "rotate", {
        token: pair.refreshToken,
      });
      for (const r of replies) expect(r.ok, r.error?.message).toBe(true);
      const kinds = replies.map((r) => (r.result as { kind: string }).kind).sort();
      expect(kinds, `round ${round}`).toEqual(["reused", "rotated"]);
      expect(await m.tokens.rotations(pair.familyId)).toBe(1);
      // The replay revoked the family: the pair the winner got is refused too.
      const won = replies.find((r) => (r.result as { kind: string }).kind === "rotated")!;
      const next = (won.result as { refreshToken: string }).refreshToken;
      await expect(m.tokens.rotate(next, LIFETIMES)).rejects.toMatchObject({
        code: "HEARTH_UNAUTHORIZED",
      });
    }
  });

  it(`two processes compare-and-set one absent meta key at the same instant: exactly one sets it (${ROUNDS} rounds)`, async () => {
    // PgMeta's casOn decides under the key's advisory lock: without it both read "absent" and both write.
    const { m, admin, workers } = await setup();
    const key = `turn:${await m.seed.session()}`;
    for (let round = 0; round < ROUNDS; round++) {
      const replies = await race(admin, workers, 3000 + round, "takeKey", { key });
      for (const r of replies) expect(r.ok, r.error?.message).toBe(true);
      const won = workers.filter((_, i) => replies[i]!.result === true);
      expect(won, `round ${round}`).toHaveLength(1);
      const { rows } = await admin.query("DELETE FROM meta WHERE key = $1 RETURNING value", [key]);
      expect(rows.map((r) => r.value)).toEqual([String(won[0]!.child.pid)]);
    }
  });

  it("a starting gateway fails the running handoffs of a dead gateway, never a live one's (on any host)", async () => {
    const { m, admin, workers } = await setup();
    const [a, b] = workers as [RaceWorker, RaceWorker];
    const [sa, sb] = [await m.seed.session(), await m.seed.session()];
    for (const sid of [sa, sb]) expect(await m.handoffs.request(sid, "http")).toBe(true);
    expect((await a.call("claim", 9000, { sessionId: sa, owner: "gw-a" }, false)).result).toBe(
      true,
    );
    expect((await b.call("claim", 9000, { sessionId: sb, owner: "gw-b" }, false)).result).toBe(
      true,
    );
    // Both processes live: nothing is an orphan, though neither owner is this process.
    expect(await m.handoffs.failOrphans([], "its gateway died")).toEqual([]);
    await a.child.kill("SIGKILL");
    await until("the killed process's connections to end", async () => {
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1",
        [`hearth:%:${a.child.pid}@%`],
      );
      return rows[0].n === 0;
    });
    expect(await m.handoffs.failOrphans([], "its gateway died")).toEqual([sa]);
    const [running] = await m.handoffs.list("running");
    expect(running).toMatchObject({ id: sb, handoff: { owner: "gw-b" } });
    expect((await m.handoffs.list("failed"))[0]).toMatchObject({
      id: sa,
      handoff: { owner: "gw-a", error: "its gateway died" },
    });
  });

  it("an owner whose presence connection was cut takes it again at its next heartbeat", async () => {
    const m = await postgres.open();
    const other = await m.reopen();
    const { url } = m.location as { url: string };
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    clients.push(admin);
    const presences = async () =>
      (
        await admin.query(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ShareLock'
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      ).rows.map((r) => r.pid as number);
    const sid = await m.seed.session();
    expect(await m.handoffs.request(sid, "http")).toBe(true);
    expect(await m.handoffs.claim(sid, "gw-x")).toBe(true);
    const [held] = await presences();
    expect(held).toEqual(expect.any(Number));
    // The server cuts the connection (a restart, a proxy): the lock is gone with it.
    await admin.query("SELECT pg_terminate_backend($1)", [held]);
    await until("the presence lock to be released", async () => (await presences()).length === 0);
    await until("a heartbeat to take the presence again", async () => {
      expect(await m.handoffs.heartbeat(sid, "gw-x")).toBe(true);
      return (await presences()).length === 1;
    });
    expect(await other.handoffs.failOrphans([], "its gateway died")).toEqual([]);
    expect((await m.handoffs.list("running")).map((s) => s.id)).toEqual([sid]);
  });
});

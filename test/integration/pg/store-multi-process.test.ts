/**
 * PostgreSQL-only claims of the store, with real processes and a real
 * server: appends from several processes to one session, and hearth's
 * connections cut by the server mid-load.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

const stores: Store[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.kill("SIGKILL");
  for (const s of stores.splice(0)) await s.close();
});

async function open(url: string): Promise<Store> {
  const store = await openStore({ home: tempHome(), url, env: {} });
  stores.push(store);
  return store;
}

describe.skipIf(!pgEnabled)("PostgreSQL store across processes", () => {
  it("two processes appending to one session get distinct, gapless ordinals and lose nothing", async () => {
    const url = await freshPgDatabase();
    const store = await open(url);
    const session = await store.sessions.create({ title: "shared" });
    const count = 150;
    const pair = await Promise.all([startWorker(), startWorker()]);
    workers.push(...pair);
    await Promise.all(
      pair.map((w) => w.call("open", { home: tempHome(), config: { store: { url } } })),
    );
    await Promise.all(
      pair.map((w, i) => w.call("appendLoop", { sessionId: session.id, count, prefix: `p${i}` })),
    );
    const acked = pair.flatMap((w) => w.acks);
    expect(acked).toHaveLength(2 * count);
    const messages = await store.messages.load(session.id);
    expect(messages.map((m) => m.ordinal)).toEqual([...Array(2 * count).keys()]);
    expect(new Set(messages.map((m) => m.clientId))).toEqual(new Set(acked));
    // Both really ran at once: their messages interleave in the transcript.
    const owners = messages.map((m) => m.clientId!.slice(0, 2));
    const switches = owners.filter((o, i) => i > 0 && o !== owners[i - 1]).length;
    expect(switches).toBeGreaterThan(1);
    expect((await store.sessions.require(session.id)).messageCount).toBe(2 * count);
  });

  it("connections cut by the server mid-load give HEARTH_PG_UNAVAILABLE or a retried success, never a false acknowledgement", async () => {
    const url = await freshPgDatabase();
    const database = new URL(url).pathname.slice(1);
    const store = await open(url);
    const session = await store.sessions.create();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const acked: string[] = [];
    const failures: string[] = [];
    let terminated = 0;
    try {
      const chains = 4;
      const perChain = 60;
      const chain = async (c: number, from: number) => {
        for (let i = from; i < from + perChain; i++) {
          const clientId = `c${c}-${i}`;
          // The caller's part of the contract: retry an unacknowledged append with its clientId.
          for (let attempt = 0; ; attempt++) {
            try {
              await store.messages.append(session.id, {
                role: "user",
                content: clientId,
                clientId,
              });
              acked.push(clientId);
              break;
            } catch (err) {
              failures.push(isHearthError(err) ? err.code : `raw: ${String(err)}`);
              if (attempt > 20) throw err;
            }
          }
          if (c === 0 && i % 5 === 4) {
            const { rows } = await admin.query(
              `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
                WHERE application_name LIKE 'hearth:%' AND datname = $1`,
              [database],
            );
            terminated += Number(rows[0].n);
          }
        }
      };
      // Until a cut has met an append in flight (on a busy machine every cut
      // of a round can land between queries), 10 rounds at most.
      let rounds = 0;
      do {
        await Promise.all([...Array(chains).keys()].map((c) => chain(c, rounds * perChain)));
        rounds++;
      } while (failures.length === 0 && rounds < 10);
      expect(terminated).toBeGreaterThan(0);
      expect(failures.length).toBeGreaterThan(0);
      expect(new Set(failures)).toEqual(new Set(["HEARTH_PG_UNAVAILABLE"]));
      // Every acknowledged append is stored, once; nothing else is; ordinals stay gapless.
      const check = await open(url);
      const messages = await check.messages.load(session.id);
      expect(messages.map((m) => m.clientId).sort()).toEqual([...acked].sort());
      expect(messages.map((m) => m.ordinal)).toEqual([...Array(acked.length).keys()]);
      expect(acked).toHaveLength(chains * perChain * rounds);
    } finally {
      await admin.end();
    }
  });
});
